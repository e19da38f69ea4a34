#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nk {

// "1.8GHz", "1800MHz", "1800000kHz", "1800000" (kHz, as sysfs) -> kHz.
Result<uint64_t> parseFrequencyKhz(std::string_view text);
// 1800000 -> "1.80 GHz"
std::string formatFrequencyKhz(uint64_t khz);

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}. Rejects empty items, reversed ranges,
// and anything that is not a number.
Result<std::vector<uint32_t>> parseCpuList(std::string_view text);
// {0,1,2,3,8} -> "0-3,8"
std::string formatCpuList(const std::vector<uint32_t>& cpus);

// "45W", "45.5 W", "45000mW" -> watts.
Result<double> parsePowerWatts(std::string_view text);

std::string_view trim(std::string_view text);
std::vector<std::string_view> splitWhitespace(std::string_view text);

}  // namespace nk
