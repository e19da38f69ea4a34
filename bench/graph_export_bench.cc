// The exports' goal: a session of 1 million tasks exported in under 10 s
// per format, with the CLI's memory flat for the streamed ones. Writes
// synthetic recordings of 250k, 500k and 1M tasks in the daemon's format
// (RecordingWriter frames of packed TaskEventBatches, as PublishStream
// records them: one thread creates the tasks, each depending on the one
// before, four workers run them), then runs `nodekeeper export FILE` for
// each format as its own process and reports its wall time, output size
// and peak RSS (wait4's ru_maxrss), side by side in one table.
//
//   graph_export_bench [TASKS]   (TASKS: only that size)
//   graph_export_bench --write-recording PATH TASKS   (only the recording)
// The CLI is $NK_CLI, else ../cli/nodekeeper next to this program.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.pb.h"
#include "perfetto/perfetto_trace.pb.h"
#include "taskgraph/recording_writer.h"
#include "testlib/temp_dir.h"
#include "wire/task_event_record.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = nodekeeper::v1;
using nk::wire::TaskEventRecord;
using nk::wire::TaskEventType;

constexpr int kWorkers = 4;
constexpr uint64_t kPerFrame = 1024;

void add(std::string& records, TaskEventType type, uint64_t ts, uint64_t task, uint64_t a = 0, uint64_t b = 0,
         uint64_t c = 0) {
  TaskEventRecord r{};
  r.type = type;
  r.timestamp_ns = ts;
  r.task_id = task;
  r.a = a;
  r.b = b;
  r.c = c;
  records.append(reinterpret_cast<const char*>(&r), sizeof r);
}

bool writeRecording(const fs::path& path, uint64_t tasks) {
  auto writer = nk::RecordingWriter::create(path);
  if (!writer) {
    std::fprintf(stderr, "%s\n", writer.error().message.c_str());
    return false;
  }
  const char* functions[] = {"cholesky_potrf", "cholesky_trsm", "cholesky_syrk", "cholesky_gemm"};
  const uint64_t slot = uint64_t{1} << 40;  // ids as libnodekeeper makes them
  const uint64_t t0 = 1'000'000'000'000;
  v1::TaskEventBatch batch;
  std::string wire;
  for (uint64_t first = 1; first <= tasks; first += kPerFrame) {
    const uint64_t last = std::min(tasks, first + kPerFrame - 1);
    std::string creator, workers[kWorkers];
    for (uint64_t i = first; i <= last; ++i) {
      const uint64_t at = t0 + i * 400;
      add(creator, TaskEventType::kCreated, at, slot | i, 0, 1 + i % 4);
      if (i > 1) add(creator, TaskEventType::kDependence, at + 1, slot | i, slot | (i - 1), 0x7f0000000000 + (i % 64) * 4096, 3);
      std::string& w = workers[i % kWorkers];
      add(w, TaskEventType::kStarted, at + 200, slot | i, i % kWorkers);
      add(w, TaskEventType::kFinished, at + 390, slot | i);
    }
    // One frame per thread's chunk, as the app ships them (a batch per
    // thread per round, in slot order): the workers' frames, with starts of
    // tasks whose creations are in the creator's frame after them.
    auto append = [&](uint32_t thread, const std::string& records, bool with_functions) -> bool {
      batch.Clear();
      batch.set_session_id(1);
      if (with_functions) {
        for (uint64_t k = 0; k < 4; ++k) {
          auto* f = batch.add_functions();
          f->set_key(k + 1);
          f->set_name(functions[k]);
        }
      }
      auto* p = batch.add_packed();
      p->set_thread(thread);
      p->set_records(records);
      wire.clear();
      batch.SerializeToString(&wire);
      if (nk::Status s = writer->append(std::as_bytes(std::span(wire.data(), wire.size()))); !s) {
        std::fprintf(stderr, "%s\n", s.error().message.c_str());
        return false;
      }
      return true;
    };
    for (int t = 0; t < kWorkers; ++t)
      if (!append(static_cast<uint32_t>(t), workers[t], false)) return false;
    if (!append(kWorkers, creator, first == 1)) return false;
  }
  return true;
}

struct Run {
  bool ok = false;
  double seconds = 0;
  long peak_rss_kb = 0;
};

Run runCli(const std::string& cli, const std::vector<std::string>& args) {
  Run run;
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(cli.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (!std::getenv("NK_BENCH_VERBOSE")) std::freopen("/dev/null", "w", stderr);
    execv(cli.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  run.peak_rss_kb = usage.ru_maxrss;
  return run;
}

// The Perfetto trace read back packet by packet with the trace proto:
// slices (a begin matched with an end) and how many tasks have exactly one.
struct Decoded {
  bool ok = false;
  uint64_t begins = 0, ends = 0, tasks_with_one_slice = 0;
};

Decoded decodePerfetto(const fs::path& path, uint64_t tasks) {
  Decoded d;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return d;
  google::protobuf::io::FileInputStream file(fd);
  file.SetCloseOnDelete(true);
  google::protobuf::io::CodedInputStream in(&file);
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  perfetto::protos::TracePacket packet;
  std::vector<uint8_t> slices(tasks + 1, 0);
  std::map<uint64_t, std::string> annotation_names;
  uint64_t task_iid = 0;
  for (uint32_t tag; (tag = in.ReadTag()) != 0;) {
    uint32_t size = 0;
    if (tag != 0x0a || !in.ReadVarint32(&size)) return d;
    auto limit = in.PushLimit(static_cast<int>(size));
    if (!packet.ParseFromCodedStream(&in)) return d;
    in.PopLimit(limit);
    for (const auto& n : packet.interned_data().debug_annotation_names())
      if (n.name() == "task") task_iid = n.iid();
    if (!packet.has_track_event()) continue;
    const auto& e = packet.track_event();
    if (e.type() == perfetto::protos::TrackEvent::TYPE_SLICE_END) ++d.ends;
    if (e.type() != perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN) continue;
    ++d.begins;
    for (const auto& a : e.debug_annotations()) {
      if (a.name_iid() != task_iid) continue;
      const uint64_t serial = a.uint_value() & ((uint64_t{1} << 40) - 1);
      if (serial <= tasks && slices[serial] < 2) ++slices[serial];
    }
  }
  for (uint64_t i = 1; i <= tasks; ++i) d.tasks_with_one_slice += slices[i] == 1;
  d.ok = true;
  return d;
}

uint64_t sizeOf(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::file_size(p, ec);
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator(); ++it)
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-recording") == 0)
    return writeRecording(argv[2], std::strtoull(argv[3], nullptr, 10)) ? 0 : 1;
  std::vector<uint64_t> sizes = {250'000, 500'000, 1'000'000};
  if (argc > 1) sizes = {std::strtoull(argv[1], nullptr, 10)};
  std::string cli = std::getenv("NK_CLI") ? std::getenv("NK_CLI") : "";
  if (cli.empty()) cli = (fs::read_symlink("/proc/self/exe").parent_path() / ".." / "cli" / "nodekeeper").string();
  if (access(cli.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "graph_export_bench: no CLI at %s (set NK_CLI)\n", cli.c_str());
    return 1;
  }
  // A directory of this run's own: two runs at once must not clear each other's files.
  const nk::test::TempDir scratch("graph-export-bench");
  std::printf("graph_export_bench: `nodekeeper export` of a synthetic recording (goal: under 10 s per format at 1M "
              "tasks, streamed formats' memory flat)\n");
  std::printf("%-9s %-9s %9s %9s %10s %10s %12s\n", "tasks", "format", "seconds", "out MB", "bytes/task", "peak RSS MB",
              "vs perfetto");
  int failures = 0;
  for (uint64_t n : sizes) {
    const fs::path recording = scratch.path() / ("session-" + std::to_string(n) + ".nkrec");
    auto t0 = std::chrono::steady_clock::now();
    if (!writeRecording(recording, n)) return 1;
    std::printf("%-9" PRIu64 " %-9s %9.2f %9.1f %10.1f %10s %12s\n", n, "(record)",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                static_cast<double>(sizeOf(recording)) / 1e6, static_cast<double>(sizeOf(recording)) / n, "", "");
    double perfetto_s = 0;
    for (const char* format : {"perfetto", "otf2", "json", "dot"}) {
      const fs::path out = scratch.path() / (std::string("out-") + format);
      Run r = runCli(cli, {"export", recording.string(), "--format", format, "--out", out.string()});
      if (!r.ok) {
        std::printf("%-9" PRIu64 " %-9s FAILED (rerun with NK_BENCH_VERBOSE=1)\n", n, format);
        ++failures;
        continue;
      }
      if (std::strcmp(format, "perfetto") == 0) perfetto_s = r.seconds;
      const uint64_t bytes = sizeOf(out);
      char ratio[32] = "";
      if (perfetto_s > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", r.seconds / perfetto_s);
      std::printf("%-9" PRIu64 " %-9s %9.2f %9.1f %10.1f %10.1f %12s\n", n, format, r.seconds,
                  static_cast<double>(bytes) / 1e6, static_cast<double>(bytes) / n,
                  static_cast<double>(r.peak_rss_kb) / 1024, ratio);
      std::fflush(stdout);
      if (std::strcmp(format, "perfetto") == 0) {
        Decoded d = decodePerfetto(out, n);
        std::printf("%-9" PRIu64 " %-9s decoded with the trace proto: %" PRIu64 " SLICE_BEGIN, %" PRIu64
                    " SLICE_END, %" PRIu64 " of %" PRIu64 " tasks with exactly one slice%s\n",
                    n, "", d.begins, d.ends, d.tasks_with_one_slice, n, d.ok ? "" : " (DECODE FAILED)");
        if (!d.ok || d.tasks_with_one_slice != n || d.begins != n || d.ends != n) ++failures;
      }
      std::error_code ec;
      fs::remove_all(out, ec);
    }
    std::error_code ec;
    fs::remove(recording, ec);
  }
  return failures == 0 ? 0 : 1;
}
