#include "private_lttng.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

namespace nk::bench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::set<std::string> lttngWaitShms() {
  std::set<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/dev/shm", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().filename().string().rfind("lttng-ust-wait-", 0) == 0) names.insert(it->path().filename());
  return names;
}

}  // namespace

uintmax_t bytesUnder(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path, ec);
  uintmax_t bytes = 0;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  return bytes;
}

bool PrivateLttng::start(const fs::path& dir) {
  home_ = dir / "lttng-home";
  shms_before_ = lttngWaitShms();
  std::error_code ec;
  fs::create_directories(home_, ec);
  if (geteuid() == 0) {
    uid_ = 65534;
    if (::chown(home_.c_str(), *uid_, *uid_) != 0) {
      error_ = "cannot hand " + home_.string() + " to uid 65534";
      return false;
    }
  }
  test::ProcessResult r = test::runProgram(
      {"/usr/bin/env", "LTTNG_HOME=" + home_.string(), "lttng-sessiond", "--daemonize", "--no-kernel"}, uid_, 30s);
  std::ifstream pid_file(home_ / ".lttng" / "lttng-sessiond.pid");
  if (r.exit_code != 0 || !(pid_file >> pid_)) {
    error_ = "lttng-sessiond did not start (exit " + std::to_string(r.exit_code) + "): " + r.err.substr(0, 300);
    pid_ = -1;
    return false;
  }
  return true;
}

void PrivateLttng::stop() {
  if (pid_ <= 0) return;
  lttng({"destroy", "--all"});
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100 && ::kill(pid_, 0) == 0; ++i) std::this_thread::sleep_for(50ms);
  if (::kill(pid_, 0) == 0) ::kill(pid_, SIGKILL);
  pid_ = -1;
  for (const std::string& name : lttngWaitShms())
    if (!shms_before_.count(name)) ::shm_unlink(("/" + name).c_str());
}

test::ProcessResult PrivateLttng::lttng(std::vector<std::string> args) const {
  args.insert(args.begin(), {"/usr/bin/env", "LTTNG_HOME=" + home_.string(), "lttng"});
  return test::runProgram(args, uid_, 120s);
}

bool PrivateLttng::makeSessions() {
  for (const bool blocking : {false, true}) {
    const std::string name = sessionName(blocking);
    std::vector<std::string> channel = {"enable-channel", "-u",           "-s", name,        "--subbuf-size",
                                        "512K",           "--num-subbuf", "4",  "--discard", "nk"};
    if (blocking) channel.insert(channel.end(), {"--blocking-timeout", "inf"});
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"create", name, "--output", (home_ / name).string()},
                                               channel,
                                               {"enable-event", "-u", "-s", name, "-c", "nk", "nk_omp:*"}}) {
      test::ProcessResult r = lttng(args);
      if (r.exit_code != 0) {
        error_ = "lttng " + args[0] + ": " + r.err.substr(0, 300);
        return false;
      }
    }
  }
  return true;
}

std::optional<PrivateLttng::Recorded> PrivateLttng::record(bool blocking, const std::function<bool()>& run) {
  const std::string name = sessionName(blocking);
  Totals& totals = totals_[blocking];
  if (lttng({"start", name}).exit_code != 0) {
    error_ = "lttng start " + name + " failed";
    return std::nullopt;
  }
  const bool ran = run();
  test::ProcessResult stopped = lttng({"stop", name});
  test::ProcessResult listed = lttng({"list", name, "-c", "nk"});
  std::smatch m;
  if (!ran || stopped.exit_code != 0 || !std::regex_search(listed.out, m, std::regex("Discarded events: *([0-9]+)"))) {
    error_ = ran ? "lttng stop or list " + name + " failed: " + stopped.err + listed.err : "the run failed";
    return std::nullopt;
  }
  const uint64_t discarded = std::stoull(m[1]);
  const uintmax_t bytes = bytesUnder(home_ / name);
  Recorded recorded{discarded - totals.discarded, bytes - totals.trace_bytes};
  totals = {discarded, bytes};
  if (bytes > (uintmax_t{512} << 20) && lttng({"clear", name}).exit_code == 0)
    totals.trace_bytes = bytesUnder(home_ / name);
  return recorded;
}

}  // namespace nk::bench
