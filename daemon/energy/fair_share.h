#pragma once

#include <cstdint>
#include <span>

namespace nk {

// Max-min fair division of a node resource (power, cores) among apps.
class FairShare {
 public:
  static void divide(double capacity, std::span<const double> demands, std::span<double> out);
  static void divide(uint32_t capacity, std::span<const uint32_t> demands, std::span<uint32_t> out);
};

}  // namespace nk
