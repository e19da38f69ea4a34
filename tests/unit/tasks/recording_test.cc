#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "taskgraph/recording_format.h"
#include "taskgraph/recording_reader.h"
#include "taskgraph/recording_writer.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::byte>;

std::span<const std::byte> asBytes(std::string_view text) { return std::as_bytes(std::span(text)); }

// Deterministic payload for frame `index`: its size and contents depend on it.
Bytes payloadFor(uint32_t index, size_t size) {
  Bytes out(size);
  std::mt19937 rng(index * 2654435761u + 1);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Bitwise CRC-32C, the definition, to check the sliced table version against.
uint32_t referenceCrc32c(std::span<const std::byte> data) {
  uint32_t crc = 0xFFFFFFFF;
  for (std::byte b : data) {
    crc ^= static_cast<uint32_t>(b);
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
  }
  return ~crc;
}

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override { file_ = dir_ / "session.nkrec"; }

  // Writes frames of the given sizes; returns the offset of each frame.
  // Uncompressed (version 1), so that the tests of the framing know where
  // every byte is; the version 2 tests below compress.
  std::vector<uint64_t> writeFrames(const std::vector<size_t>& sizes, uint32_t version = 1) {
    auto writer = RecordingWriter::create(file_, version);
    EXPECT_TRUE(writer.ok()) << (writer.ok() ? "" : writer.error().message);
    std::vector<uint64_t> offsets;
    if (!writer.ok()) return offsets;
    for (uint32_t i = 0; i < sizes.size(); ++i) {
      offsets.push_back(writer->size());
      Status appended = writer->append(payloadFor(i, sizes[i]));
      EXPECT_TRUE(appended.ok()) << (appended.ok() ? "" : appended.error().message);
    }
    EXPECT_TRUE(writer->flush().ok());
    EXPECT_EQ(writer->size(), fs::file_size(file_));
    return offsets;
  }

  // Reads every good frame; checks each against payloadFor(i, sizes[i]).
  struct ReadBack {
    size_t frames = 0;
    std::string reason;
    uint64_t good_bytes = 0;
    RecordingReader::StopCause cause = RecordingReader::StopCause::kNone;
  };
  ReadBack readAll(const std::vector<size_t>& sizes) {
    ReadBack out;
    auto reader = RecordingReader::open(file_);
    EXPECT_TRUE(reader.ok()) << (reader.ok() ? "" : reader.error().message);
    if (!reader.ok()) return out;
    while (auto payload = reader->next()) {
      EXPECT_LT(out.frames, sizes.size());
      if (out.frames < sizes.size()) {
        auto index = static_cast<uint32_t>(out.frames);
        EXPECT_EQ(*payload, payloadFor(index, sizes[index])) << "frame " << out.frames;
      }
      ++out.frames;
    }
    EXPECT_FALSE(reader->next().has_value());  // stays stopped
    out.reason = reader->stopReason();
    out.good_bytes = reader->goodBytes();
    out.cause = reader->stopCause();
    return out;
  }

  void patchFile(uint64_t offset, std::span<const std::byte> bytes) {
    int fd = ::open(file_.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }
  void patchLe32(uint64_t offset, uint32_t value) {
    std::byte raw[4];
    storeLe32(raw, value);
    patchFile(offset, raw);
  }
  std::byte byteAt(uint64_t offset) {
    std::ifstream in(file_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    return static_cast<std::byte>(in.get());
  }

  static std::string at(uint64_t offset) { return "at byte offset " + std::to_string(offset) + ":"; }

  test::TempDir dir_{"recording-test"};
  fs::path file_;
};

// Sizes from 0 bytes to 100 KB, repeatable.
std::vector<size_t> varyingSizes(size_t count) {
  std::mt19937 rng(42);
  std::vector<size_t> sizes(count);
  for (size_t i = 0; i < count; ++i) {
    switch (i % 4) {
      case 0:
        sizes[i] = rng() % 64;
        break;
      case 1:
        sizes[i] = rng() % 4096;
        break;
      default:
        sizes[i] = rng() % (100 * 1000 + 1);
        break;
    }
  }
  sizes[0] = 0;
  sizes[1] = 100 * 1000;
  return sizes;
}

TEST(Crc32c, CheckValue) {
  EXPECT_EQ(crc32c(asBytes("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c({}), 0u);
  // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of 0xFF.
  Bytes zeros(32, std::byte{0}), ones(32, std::byte{0xFF});
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
}

TEST(Crc32c, SlicedTableMatchesBitwiseDefinitionAtEveryLengthAndAlignment) {
  Bytes data = payloadFor(7, 300);
  for (size_t start = 0; start < 8; ++start)
    for (size_t length = 0; start + length <= data.size(); length += (length < 40 ? 1 : 37)) {
      auto piece = std::span<const std::byte>(data).subspan(start, length);
      ASSERT_EQ(crc32c(piece), referenceCrc32c(piece)) << "start " << start << " length " << length;
    }
}

TEST(RecordingFormat, HeadersAreLittleEndianAsDocumented) {
  auto file_header = recordingFileHeader();
  EXPECT_EQ(std::memcmp(file_header.data(), "NKRECORD", 8), 0);
  EXPECT_EQ(loadLe32(file_header.data() + 8), kRecordingVersion);
  auto frame = frameHeader(asBytes("123456789"));
  EXPECT_EQ(std::memcmp(frame.data(), "NKR1", 4), 0);
  EXPECT_EQ(static_cast<int>(frame[4]), 9);
  EXPECT_EQ(loadLe32(frame.data() + 4), 9u);
  EXPECT_EQ(static_cast<int>(frame[8]), 0x83);  // 0xE3069283, low byte first
  EXPECT_EQ(loadLe32(frame.data() + 8), 0xE3069283u);
}

TEST_F(RecordingTest, RoundTripsThousandFramesOfVaryingSize) {
  auto sizes = varyingSizes(1000);
  auto offsets = writeFrames(sizes);
  ASSERT_EQ(offsets.size(), 1000u);
  EXPECT_EQ(offsets[0], kRecordingFileHeaderSize);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 1000u);
  EXPECT_EQ(read.reason, "");
  EXPECT_EQ(read.cause, RecordingReader::StopCause::kNone);
  EXPECT_EQ(read.good_bytes, fs::file_size(file_));
}

TEST_F(RecordingTest, FramesLargerThanTheReadBufferRoundTrip) {
  std::vector<size_t> sizes = {10, 3 * 1024 * 1024 + 5, 7, kMaxFramePayload, 0, 600 * 1024};
  writeFrames(sizes);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, sizes.size());
  EXPECT_EQ(read.reason, "");
}

// Version 2, what the daemon writes: every frame compressed, read back
// exactly, and compressible batches take a fraction of their size.
TEST_F(RecordingTest, CompressedFramesRoundTripAndCompressibleOnesShrink) {
  auto sizes = varyingSizes(300);
  sizes.push_back(kMaxFramePayload);  // random bytes: grows, still fits
  writeFrames(sizes, kRecordingVersion);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, sizes.size());
  EXPECT_EQ(read.reason, "");
  EXPECT_EQ(read.good_bytes, fs::file_size(file_));

  fs::remove(file_);
  auto writer = RecordingWriter::create(file_);
  ASSERT_TRUE(writer.ok());
  Bytes zeros(1 << 20);
  ASSERT_TRUE(writer->append(zeros).ok());
  EXPECT_LT(writer->size(), kRecordingFileHeaderSize + kFrameHeaderSize + zeros.size() / 100);
  auto reader = RecordingReader::open(file_);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->version(), kRecordingVersion);
  auto back = reader->next();
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, zeros);
}

// The frame's checksum covers the compressed bytes: damage is caught before
// zstd sees it, and a frame with a good checksum that is not zstd (written
// by something else) stops the reader with a reason, not a crash.
TEST_F(RecordingTest, CompressedFramesThatDoNotDecompressStopTheReader) {
  std::vector<size_t> sizes = {100, 5000, 100};
  auto offsets = writeFrames(sizes, kRecordingVersion);
  patchFile(offsets[1] + kFrameHeaderSize + 3, asBytes("X"));
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 1u);
  EXPECT_EQ(read.cause, RecordingReader::StopCause::kChecksumMismatch) << read.reason;

  fs::remove(file_);
  writeFrames({100}, kRecordingVersion);
  {
    // A raw payload, framed with a valid checksum, in a version 2 file.
    Bytes not_zstd = payloadFor(7, 64);
    auto header = frameHeader(not_zstd);
    std::ofstream out(file_, std::ios::binary | std::ios::app);
    out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(not_zstd.data()), static_cast<std::streamsize>(not_zstd.size()));
  }
  read = readAll({100, 64});
  EXPECT_EQ(read.frames, 1u);
  EXPECT_EQ(read.cause, RecordingReader::StopCause::kUndecodable) << read.reason;
  EXPECT_NE(read.reason.find("undecodable frame"), std::string::npos) << read.reason;
}

// Appending to a version 1 recording (an older daemon's) goes on in version
// 1: one file, one format.
TEST_F(RecordingTest, OpenForAppendKeepsTheFilesVersion) {
  writeFrames({10, 20}, 1);
  {
    auto writer = RecordingWriter::openForAppend(file_);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    ASSERT_TRUE(writer->append(payloadFor(2, 30)).ok());
  }
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize + 3 * kFrameHeaderSize + 60);
  auto read = readAll({10, 20, 30});
  EXPECT_EQ(read.frames, 3u);
  EXPECT_EQ(read.reason, "");
}

// stage() says what a frame will take before anything is written.
TEST_F(RecordingTest, StagedFrameSizeIsWhatTheFileGrowsBy) {
  auto writer = RecordingWriter::create(file_);
  ASSERT_TRUE(writer.ok());
  Bytes text(5000, std::byte{'a'});
  auto staged = writer->stage(text);
  ASSERT_TRUE(staged.ok());
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize);  // nothing yet
  ASSERT_TRUE(writer->appendStaged().ok());
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize + *staged);
  EXPECT_FALSE(writer->appendStaged().ok());  // once
}

TEST_F(RecordingTest, EmptyPayloadFramesAreFramesNotTheEnd) {
  std::vector<size_t> sizes = {0, 0, 5, 0, 0};
  auto offsets = writeFrames(sizes);
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize + 5 * kFrameHeaderSize + 5);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 5u);
  EXPECT_EQ(read.reason, "");
}

TEST_F(RecordingTest, HeaderOnlyFileIsACleanEmptyRecording) {
  writeFrames({});
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize);
  auto read = readAll({});
  EXPECT_EQ(read.frames, 0u);
  EXPECT_EQ(read.reason, "");
  EXPECT_EQ(read.good_bytes, kRecordingFileHeaderSize);
}

TEST_F(RecordingTest, TruncatedInLastPayloadReadsEveryEarlierFrame) {
  std::vector<size_t> sizes = {100, 2000, 0, 50000, 3000};
  auto offsets = writeFrames(sizes);
  fs::resize_file(file_, offsets.back() + kFrameHeaderSize + 1500);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 4u);
  EXPECT_EQ(read.cause, RecordingReader::StopCause::kTruncatedFrame);
  EXPECT_NE(read.reason.find("truncated frame"), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find(at(offsets.back())), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find("1500 of 3000"), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find(file_.string()), std::string::npos) << read.reason;
  EXPECT_EQ(read.reason.find('\n'), std::string::npos);
  EXPECT_EQ(read.good_bytes, offsets.back());
}

TEST_F(RecordingTest, TruncatedInLastHeaderReadsEveryEarlierFrame) {
  std::vector<size_t> sizes = {100, 2000, 0, 50000, 3000};
  auto offsets = writeFrames(sizes);
  fs::resize_file(file_, offsets.back() + 5);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 4u);
  EXPECT_NE(read.reason.find("truncated frame"), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find(at(offsets.back())), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find("header has 5 of 12"), std::string::npos) << read.reason;
  EXPECT_EQ(read.good_bytes, offsets.back());
}

TEST_F(RecordingTest, TruncationAtEveryByteOfTheLastFrameIsDetected) {
  std::vector<size_t> sizes = {30, 40};
  auto offsets = writeFrames(sizes);
  uint64_t full = fs::file_size(file_);
  for (uint64_t cut = full - 1; cut > offsets[1]; --cut) {
    fs::resize_file(file_, cut);
    auto read = readAll(sizes);
    ASSERT_EQ(read.frames, 1u) << "cut at " << cut;
    ASSERT_EQ(read.cause, RecordingReader::StopCause::kTruncatedFrame) << "cut at " << cut;
    ASSERT_EQ(read.good_bytes, offsets[1]);
  }
  fs::resize_file(file_, offsets[1]);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 1u);
  EXPECT_EQ(read.reason, "");
}

TEST_F(RecordingTest, FlippedPayloadByteStopsAtThatFrameWithChecksumMismatch) {
  std::vector<size_t> sizes = {100, 200, 300, 400, 500, 600};
  auto offsets = writeFrames(sizes);
  uint64_t victim = offsets[3] + kFrameHeaderSize + 123;
  std::byte flipped = byteAt(victim) ^ std::byte{0x10};
  patchFile(victim, std::span(&flipped, 1));
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 3u);
  EXPECT_EQ(read.cause, RecordingReader::StopCause::kChecksumMismatch);
  EXPECT_NE(read.reason.find("checksum mismatch"), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find(at(offsets[3])), std::string::npos) << read.reason;
  EXPECT_EQ(read.good_bytes, offsets[3]);
}

TEST_F(RecordingTest, BadFrameMagicStops) {
  std::vector<size_t> sizes = {10, 20, 30};
  auto offsets = writeFrames(sizes);
  patchFile(offsets[2], asBytes("XXXX"));
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 2u);
  EXPECT_NE(read.reason.find("bad magic"), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find(at(offsets[2])), std::string::npos) << read.reason;
}

TEST_F(RecordingTest, OversizeLengthFieldStopsWithoutAllocatingIt) {
  std::vector<size_t> sizes = {10, 20, 30};
  auto offsets = writeFrames(sizes);
  patchLe32(offsets[1] + kFrameLengthOffset, kMaxFramePayload + 1);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 1u);
  EXPECT_EQ(read.cause, RecordingReader::StopCause::kFrameTooLarge);
  EXPECT_NE(read.reason.find("frame too large"), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find(at(offsets[1])), std::string::npos) << read.reason;
  EXPECT_NE(read.reason.find(std::to_string(kMaxFramePayload + 1)), std::string::npos) << read.reason;

  patchLe32(offsets[1] + kFrameLengthOffset, 0xFFFFFFFF);
  EXPECT_NE(readAll(sizes).reason.find("frame too large"), std::string::npos);
}

TEST_F(RecordingTest, LengthFieldPointingIntoTheNextFrameIsAChecksumMismatch) {
  std::vector<size_t> sizes = {10, 20, 30};
  auto offsets = writeFrames(sizes);
  patchLe32(offsets[1] + kFrameLengthOffset, 25);
  auto read = readAll(sizes);
  EXPECT_EQ(read.frames, 1u);
  EXPECT_EQ(read.cause, RecordingReader::StopCause::kChecksumMismatch) << read.reason;
}

TEST_F(RecordingTest, WriterRefusesOversizePayloadAndLeavesTheFileAlone) {
  auto writer = RecordingWriter::create(file_);
  ASSERT_TRUE(writer.ok());
  Bytes big(kMaxFramePayload + 1);
  Status appended = writer->append(big);
  ASSERT_FALSE(appended.ok());
  EXPECT_EQ(appended.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(writer->size(), kRecordingFileHeaderSize);
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize);
  EXPECT_TRUE(writer->append(payloadFor(0, 10)).ok());
}

TEST_F(RecordingTest, BadFileHeaderIsAnErrorThatSaysWhy) {
  auto write = [&](std::string_view content) { std::ofstream(file_, std::ios::binary | std::ios::trunc) << content; };
  write("");
  auto empty = RecordingReader::open(file_);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(empty.error().message.find("file header truncated (0 of 16"), std::string::npos) << empty.error().message;

  write("NKREC");
  auto short_header = RecordingReader::open(file_);
  ASSERT_FALSE(short_header.ok());
  EXPECT_NE(short_header.error().message.find("truncated (5 of 16"), std::string::npos);

  write(std::string("{\"controls\": []}\n"));
  auto json = RecordingReader::open(file_);
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.error().message.find("bad file magic"), std::string::npos) << json.error().message;
  EXPECT_NE(json.error().message.find(file_.string()), std::string::npos);

  write(std::string("NKRECORD\x03\0\0\0\0\0\0\0", 16));
  auto future = RecordingReader::open(file_);
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.error().message.find("unsupported recording version 3"), std::string::npos)
      << future.error().message;

  EXPECT_EQ(RecordingReader::open(dir_ / "missing").error().code, ErrorCode::kNotFound);
  // openForAppend reports the same.
  EXPECT_NE(RecordingWriter::openForAppend(file_).error().message.find("unsupported recording version"),
            std::string::npos);
}

TEST_F(RecordingTest, CreateRefusesAnExistingFileAndUsesMode0640) {
  mode_t old_mask = ::umask(022);
  {
    auto writer = RecordingWriter::create(file_);
    ASSERT_TRUE(writer.ok());
  }
  ::umask(old_mask);
  EXPECT_EQ(fs::status(file_).permissions(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  auto again = RecordingWriter::create(file_);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize);  // untouched
}

TEST_F(RecordingTest, CreateLeavesNothingBehindWhenItFails) {
  auto missing_dir = RecordingWriter::create(dir_ / "no" / "such" / "dir.nkrec");
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_NE(missing_dir.error().message.find("cannot create recording"), std::string::npos);
  {
    auto writer = RecordingWriter::create(file_);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    ASSERT_TRUE(RecordingWriter::create(file_).error().code == ErrorCode::kFailedPrecondition);
  }
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_.path())) ++entries;
  EXPECT_EQ(entries, 1u);
  EXPECT_EQ(fs::file_size(file_), kRecordingFileHeaderSize);
}

TEST_F(RecordingTest, OpenForAppendCutsATornTailAndAppendsAfterTheLastGoodFrame) {
  std::vector<size_t> sizes = {100, 200, 300, 400, 500};
  auto offsets = writeFrames(sizes);
  fs::resize_file(file_, offsets[4] + kFrameHeaderSize + 250);  // torn frame 4
  {
    auto writer = RecordingWriter::openForAppend(file_);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    EXPECT_EQ(writer->size(), offsets[4]);
    EXPECT_EQ(fs::file_size(file_), offsets[4]);
    // The new frame 4 and 5 carry what payloadFor(4), payloadFor(5) give.
    ASSERT_TRUE(writer->append(payloadFor(4, 77)).ok());
    ASSERT_TRUE(writer->append(payloadFor(5, 0)).ok());
    ASSERT_TRUE(writer->flush().ok());
    EXPECT_EQ(writer->size(), fs::file_size(file_));
  }
  std::vector<size_t> resumed = {100, 200, 300, 400, 77, 0};
  auto read = readAll(resumed);
  EXPECT_EQ(read.frames, 6u);
  EXPECT_EQ(read.reason, "");
  EXPECT_EQ(read.good_bytes, fs::file_size(file_));
}

TEST_F(RecordingTest, OpenForAppendOnACleanFileAppendsAtTheEnd) {
  std::vector<size_t> sizes = {100, 200};
  writeFrames(sizes);
  uint64_t before = fs::file_size(file_);
  {
    auto writer = RecordingWriter::openForAppend(file_);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    EXPECT_EQ(writer->size(), before);
    ASSERT_TRUE(writer->append(payloadFor(2, 300)).ok());
  }
  auto read = readAll({100, 200, 300});
  EXPECT_EQ(read.frames, 3u);
  EXPECT_EQ(read.reason, "");
}

TEST_F(RecordingTest, OpenForAppendRefusesDamageInTheMiddleAndKeepsTheFile) {
  std::vector<size_t> sizes = {100, 200, 300};
  auto offsets = writeFrames(sizes);
  uint64_t before = fs::file_size(file_);
  uint64_t victim = offsets[1] + kFrameHeaderSize + 5;
  std::byte flipped = byteAt(victim) ^ std::byte{1};
  patchFile(victim, std::span(&flipped, 1));
  auto writer = RecordingWriter::openForAppend(file_);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(writer.error().message.find("checksum mismatch"), std::string::npos) << writer.error().message;
  EXPECT_NE(writer.error().message.find(at(offsets[1])), std::string::npos) << writer.error().message;
  EXPECT_EQ(fs::file_size(file_), before);
}

TEST_F(RecordingTest, OnlyOneWriterAtATime) {
  auto first = RecordingWriter::create(file_);
  ASSERT_TRUE(first.ok());
  auto second = RecordingWriter::openForAppend(file_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(second.error().message.find("already open for writing"), std::string::npos);
  // Moving keeps the lock; destroying releases it.
  RecordingWriter moved = std::move(*first);
  EXPECT_FALSE(first->append(payloadFor(0, 1)).ok());  // moved-from
  EXPECT_FALSE(RecordingWriter::openForAppend(file_).ok());
  ASSERT_TRUE(moved.append(payloadFor(0, 1)).ok());
  { RecordingWriter gone = std::move(moved); }
  EXPECT_TRUE(RecordingWriter::openForAppend(file_).ok());
}

TEST_F(RecordingTest, ReaderAtACleanEndSeesFramesAppendedLater) {
  auto writer = RecordingWriter::create(file_);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->append(payloadFor(0, 10)).ok());
  auto reader = RecordingReader::open(file_);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE(reader->next().has_value());
  EXPECT_FALSE(reader->next().has_value());
  EXPECT_EQ(reader->stopReason(), "");
  ASSERT_TRUE(writer->append(payloadFor(1, 20)).ok());
  auto later = reader->next();
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(*later, payloadFor(1, 20));
  EXPECT_EQ(reader->goodBytes(), writer->size());
}

// The daemon is killed (SIGKILL) while appending 64 KiB batches: every frame
// that made it into the file whole reads back, in order, and at most the last
// one is torn; openForAppend then resumes cleanly.
TEST_F(RecordingTest, KillNineWhileAppendingLeavesAReadablePrefix) {
  constexpr size_t kSize = 64 * 1024;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = RecordingWriter::create(file_, 1);
    if (!writer.ok()) ::_exit(2);
    for (uint32_t i = 0;; ++i)
      if (!writer->append(payloadFor(i % 64, kSize)).ok()) ::_exit(3);
  }
  // Let it write some megabytes.
  for (int i = 0; i < 500; ++i) {
    std::error_code ec;
    uintmax_t size = fs::file_size(file_, ec);
    if (!ec && size > 8 * 1024 * 1024) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);

  auto reader = RecordingReader::open(file_);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  size_t frames = 0;
  while (auto payload = reader->next()) {
    ASSERT_EQ(*payload, payloadFor(static_cast<uint32_t>(frames % 64), kSize)) << "frame " << frames;
    ++frames;
  }
  EXPECT_GT(frames, 0u);
  auto cause = reader->stopCause();
  EXPECT_TRUE(cause == RecordingReader::StopCause::kNone || cause == RecordingReader::StopCause::kTruncatedFrame)
      << reader->stopReason();
  auto writer = RecordingWriter::openForAppend(file_);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  EXPECT_EQ(writer->size(), kRecordingFileHeaderSize + frames * (kFrameHeaderSize + kSize));
}

}  // namespace
}  // namespace nk
