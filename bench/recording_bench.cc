// Task-event recording throughput: RecordingWriter::append and
// RecordingReader::next on a real file system.
//
//   recording_bench [--dir DIR] [--mib N]
//
// For 64 KiB payloads (a realistic task-event batch) and 512 B payloads,
// N MiB of payload (default 256) each: appends without flushing (page cache
// only; the final fdatasync is timed apart), appends with a flush (fdatasync)
// every 64 frames, then reading the file back warm (from the page cache) and
// cold (after dropping the file's pages with posix_fadvise). Also the CRC-32C
// alone, which bounds both. MB/s are payload bytes, 10^6 per MB. The files go
// to a fresh directory under DIR (default /tmp) and are deleted at the end.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "taskgraph/recording_format.h"
#include "taskgraph/recording_reader.h"
#include "taskgraph/recording_writer.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Row {
  std::string what;
  double seconds = 0;
  uint64_t frames = 0;
  uint64_t bytes = 0;
};

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

[[noreturn]] void die(const std::string& message, const fs::path& dir) {
  std::fprintf(stderr, "recording_bench: %s\n", message.c_str());
  std::error_code ec;
  fs::remove_all(dir, ec);
  std::exit(1);
}

std::vector<std::vector<std::byte>> payloads(size_t size) {
  std::mt19937_64 rng(size);
  std::vector<std::vector<std::byte>> out(16, std::vector<std::byte>(size));
  for (auto& payload : out)
    for (auto& b : payload) b = static_cast<std::byte>(rng());
  return out;
}

// Appends `frames` payloads of `size` bytes, flushing every `flush_every`
// frames (0: never). Returns the append row and the final fdatasync's time.
Row writeFile(const fs::path& file, size_t size, uint64_t frames, uint64_t flush_every, double& final_sync_s,
              const fs::path& dir) {
  auto data = payloads(size);
  auto writer = nk::RecordingWriter::create(file);
  if (!writer) die(writer.error().message, dir);
  Row row;
  row.what = "append " +
             std::string(size >= 1024 ? std::to_string(size / 1024) + " KiB" : std::to_string(size) + " B") +
             (flush_every ? ", flush/" + std::to_string(flush_every) : ", no flush");
  auto start = Clock::now();
  for (uint64_t i = 0; i < frames; ++i) {
    if (auto ok = writer->append(data[i % data.size()]); !ok) die(ok.error().message, dir);
    if (flush_every && (i + 1) % flush_every == 0)
      if (auto ok = writer->flush(); !ok) die(ok.error().message, dir);
  }
  row.seconds = since(start);
  auto sync_start = Clock::now();
  if (auto ok = writer->flush(); !ok) die(ok.error().message, dir);
  final_sync_s = since(sync_start);
  row.frames = frames;
  row.bytes = frames * size;
  return row;
}

Row readFile(const fs::path& file, bool cold, const std::string& label, const fs::path& dir) {
  if (cold) {
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) die("cannot drop page cache", dir);
    ::close(fd);
  }
  Row row;
  row.what = label + (cold ? " (cold)" : " (warm)");
  auto start = Clock::now();
  auto reader = nk::RecordingReader::open(file);
  if (!reader) die(reader.error().message, dir);
  while (auto payload = reader->next()) {
    ++row.frames;
    row.bytes += payload->size();
  }
  row.seconds = since(start);
  if (!reader->stopReason().empty()) die(reader->stopReason(), dir);
  return row;
}

void print(const Row& row) {
  std::printf("%-32s %10.0f %12.0f %9.3f\n", row.what.c_str(), row.bytes / row.seconds / 1e6, row.frames / row.seconds,
              row.seconds);
}

}  // namespace

int main(int argc, char** argv) {
  fs::path base = "/tmp";
  uint64_t mib = 256;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--dir" && i + 1 < argc) {
      base = argv[++i];
    } else if (arg == "--mib" && i + 1 < argc) {
      mib = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: recording_bench [--dir DIR] [--mib N]\n");
      return 2;
    }
  }
  std::string tmpl = (base / "nk_recording_bench_XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  fs::path dir = tmpl;
  const uint64_t total = mib * 1024 * 1024;

  std::printf("%-32s %10s %12s %9s\n", "case", "MB/s", "frames/s", "seconds");
  {
    auto data = payloads(64 * 1024);
    Row row{"crc32c alone, 64 KiB", 0, 0, 0};
    uint32_t sink = 0;
    auto start = Clock::now();
    for (uint64_t i = 0; i < total / data[0].size(); ++i) sink ^= nk::crc32c(data[i % data.size()]);
    row.seconds = since(start);
    row.frames = total / data[0].size();
    row.bytes = total;
    print(row);
    if (sink == 0x12345678) std::printf("(unlikely)\n");
  }
  for (size_t size : {size_t{64 * 1024}, size_t{512}}) {
    uint64_t frames = total / size;
    fs::path file;
    for (uint64_t flush_every : {uint64_t{0}, uint64_t{64}}) {
      file = dir / ("bench_" + std::to_string(size) + "_" + std::to_string(flush_every) + ".nkrec");
      double final_sync_s = 0;
      print(writeFile(file, size, frames, flush_every, final_sync_s, dir));
      if (!flush_every) std::printf("%-32s %33.3f\n", "  then final fdatasync", final_sync_s);
    }
    std::string label = "read " + std::string(size >= 1024 ? "64 KiB" : "512 B");
    print(readFile(file, /*cold=*/false, label, dir));
    print(readFile(file, /*cold=*/true, label, dir));
    for (const auto& entry : fs::directory_iterator(dir)) fs::remove(entry.path());
  }
  fs::remove_all(dir);
  return 0;
}
