#pragma once

// On-disk layout of a task-event recording: one file per session, append-only.
//
//   file header (16 bytes, once, at offset 0)
//     0  8  magic "NKRECORD"
//     8  4  format version, little-endian (kRecordingVersion)
//    12  4  reserved, written as zero, ignored by readers
//   frames, back to back, until the end of the file
//     0  4  frame magic "NKR1" (the bytes N K R 1; 0x31524B4E read little-endian)
//     4  4  payload length in bytes, little-endian, at most kMaxFramePayload
//     8  4  CRC-32C (Castagnoli) of the payload, little-endian
//    12  n  payload: version 1, the batch itself; version 2 (written now), the
//           batch as one zstd frame that states its content size (at most
//           kMaxFramePayload bytes), usually a third or less of its size
//
// A frame is self-describing, so a reader needs nothing but the frame itself.
// The checksum covers the payload only: a damaged length field shows up as a
// checksum mismatch, an oversize frame, or (if it points past the end of the
// file) as a truncated frame. After a crash the file holds whole frames
// followed by at most one torn one, which readers stop at.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace nk {

inline constexpr std::array<std::byte, 8> kRecordingFileMagic = {std::byte{'N'}, std::byte{'K'}, std::byte{'R'},
                                                                 std::byte{'E'}, std::byte{'C'}, std::byte{'O'},
                                                                 std::byte{'R'}, std::byte{'D'}};
inline constexpr uint32_t kRecordingVersion = 2;
// Readers take every version from this one to kRecordingVersion.
inline constexpr uint32_t kOldestRecordingVersion = 1;
inline constexpr size_t kRecordingFileHeaderSize = 16;
inline constexpr size_t kRecordingVersionOffset = 8;

inline constexpr uint32_t kFrameMagic = 0x31524B4E;  // "NKR1" on disk
inline constexpr size_t kFrameHeaderSize = 12;
inline constexpr size_t kFrameMagicOffset = 0;
inline constexpr size_t kFrameLengthOffset = 4;
inline constexpr size_t kFrameCrcOffset = 8;
inline constexpr uint32_t kMaxFramePayload = 16u * 1024 * 1024;
// A version 2 frame stores its batch compressed; incompressible data grows
// by at most zstd's bound (1/256 and a frame header), so that is what a
// frame may take on disk.
inline constexpr uint32_t kMaxStoredFramePayload = kMaxFramePayload + kMaxFramePayload / 256 + 1024;

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), software,
// table-driven (slicing by 8). crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::span<const std::byte> data);

inline void storeLe32(std::byte* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}

inline uint32_t loadLe32(const std::byte* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(in[i]) << (8 * i);
  return value;
}

// The 16-byte file header of `version`.
std::array<std::byte, kRecordingFileHeaderSize> recordingFileHeader(uint32_t version = kRecordingVersion);

// The 12-byte header of a frame carrying `payload`.
std::array<std::byte, kFrameHeaderSize> frameHeader(std::span<const std::byte> payload);

}  // namespace nk
