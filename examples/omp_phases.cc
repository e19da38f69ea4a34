// omp_phases: an ordinary OpenMP program, with no nodekeeper calls, that
// the energy manager has to cope with as it finds it. It cycles through
// phases of different intensity (compute-bound, memory-bound, nearly idle)
// made of many short parallel regions, so a thread count that the OMPT tool
// sets between regions shows up at the next one.
//
//   omp_phases [--seconds S] [--phase-seconds P] [--report]

#include <omp.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

// 64 MB: well beyond the last-level cache of the nodes we target, so the
// memory phase streams from DRAM.
constexpr size_t kArrayDoubles = size_t{64} << 20 >> 3;
// Each memory step streams this slice; the next step takes the next one.
constexpr size_t kSliceDoubles = size_t{4} << 20 >> 3;
// About a millisecond of floating point per thread per compute step.
constexpr int kComputeIterations = 250000;
constexpr int kLightIterations = 2000;
constexpr auto kLightPause = std::chrono::milliseconds(10);

enum class Phase { kCompute, kMemory, kLight };

// Written inside every region by its primary thread, read after the region
// has joined: what --report prints is the team the program really ran with.
int g_last_team_size = 0;

void noteTeamSize() {
  if (omp_get_thread_num() == 0)
    g_last_team_size = omp_get_num_threads();
}
constexpr const char* kPhaseNames[] = {"compute", "memory", "light"};

struct Options {
  double seconds = 20.0;
  double phase_seconds = 2.0;
  bool report = false;
};

void printUsage(FILE* out) {
  std::fprintf(out,
               "usage: omp_phases [--seconds S] [--phase-seconds P] [--report]\n"
               "Runs OpenMP phases (compute, memory, light), P seconds each, repeated for S seconds,\n"
               "then prints a checksum.\n"
               "  --seconds S         total run time in seconds (default 20)\n"
               "  --phase-seconds P   length of each phase in seconds (default 2)\n"
               "  --report            one line per second on stdout: elapsed, phase, team size, steps\n"
               "  --help              this text\n");
}

bool parsePositiveSeconds(const char* flag, const char* text, double& out) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !std::isfinite(value) || !(value > 0.0)) {
    std::fprintf(stderr, "omp_phases: %s needs a positive number of seconds, got '%s'\n", flag, text);
    return false;
  }
  out = value;
  return true;
}

// Returns -1 to go on, else the exit code.
int parseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      printUsage(stdout);
      return 0;
    }
    if (arg == "--report") {
      options.report = true;
      continue;
    }
    if (arg == "--seconds" || arg == "--phase-seconds") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "omp_phases: %s needs a value\n", arg.c_str());
        printUsage(stderr);
        return 2;
      }
      double& target = arg == "--seconds" ? options.seconds : options.phase_seconds;
      if (!parsePositiveSeconds(arg.c_str(), argv[++i], target))
        return 2;
      continue;
    }
    std::fprintf(stderr, "omp_phases: unknown argument '%s'\n", arg.c_str());
    printUsage(stderr);
    return 2;
  }
  return -1;
}

// Four independent chains keep the FP units busy rather than waiting on one
// dependency; the recurrence converges, so the values stay finite.
double computeStep(unsigned long long step) {
  double total = 0.0;
#pragma omp parallel reduction(+ : total)
  {
    noteTeamSize();
    double a = 1.0 + omp_get_thread_num() + static_cast<double>(step % 7), b = a + 0.25, c = a + 0.5, d = a + 0.75;
    for (int i = 0; i < kComputeIterations; ++i) {
      a = a * 0.9999991 + 1e-6;
      b = b * 0.9999992 + 2e-6;
      c = c * 0.9999993 + 3e-6;
      d = d * 0.9999994 + 4e-6;
    }
    total += a + b + c + d;
  }
  return total;
}

// Reads and writes one slice of the array: memory traffic, little arithmetic.
double memoryStep(double* data, size_t first) {
  double total = 0.0;
#pragma omp parallel reduction(+ : total)
  {
    noteTeamSize();
#pragma omp for schedule(static)
    for (size_t i = first; i < first + kSliceDoubles; ++i) {
      data[i] = data[i] * 0.5 + 1.0;
      total += data[i];
    }
  }
  return total;
}

// A small region, then the program waits outside any region, as an
// application does between I/O or communication.
double lightStep() {
  double total = 0.0;
#pragma omp parallel reduction(+ : total)
  {
    noteTeamSize();
    double x = 1.0 + omp_get_thread_num();
    for (int i = 0; i < kLightIterations; ++i)
      x = x * 0.999 + 0.001;
    total += x;
  }
  std::this_thread::sleep_for(kLightPause);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (int rc = parseOptions(argc, argv, options); rc >= 0)
    return rc;

  std::unique_ptr<double[]> data(new double[kArrayDoubles]);
  // Touched by the team that will stream it, so its pages sit near those threads.
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < kArrayDoubles; ++i)
    data[i] = static_cast<double>(i % 1024);

  auto start = Clock::now();
  double checksum = 0.0;
  unsigned long long steps = 0;
  size_t next_slice = 0;
  double next_report_s = 1.0;
  for (;;) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= options.seconds)
      break;
    auto phase = static_cast<Phase>(static_cast<long long>(elapsed / options.phase_seconds) % 3);
    switch (phase) {
      case Phase::kCompute:
        checksum += computeStep(steps);
        break;
      case Phase::kMemory:
        checksum += memoryStep(data.get(), next_slice) * 1e-9;
        next_slice = (next_slice + kSliceDoubles) % kArrayDoubles;
        break;
      case Phase::kLight:
        checksum += lightStep();
        break;
    }
    ++steps;
    if (options.report && elapsed >= next_report_s) {
      std::printf("elapsed=%.1f phase=%s team=%d steps=%llu\n", elapsed, kPhaseNames[static_cast<int>(phase)],
                  g_last_team_size, steps);
      std::fflush(stdout);
      while (next_report_s <= elapsed)
        next_report_s += 1.0;
    }
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("omp_phases: %.1f s, %llu steps, checksum %.6e\n", elapsed, steps, checksum);
  return 0;
}
