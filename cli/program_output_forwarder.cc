#include "cli/program_output_forwarder.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <limits>

namespace nk::cli {

namespace {

constexpr int kPollMs = 50;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ProgramOutputForwarder::ProgramOutputForwarder(int from, int to, std::string prefix)
    : from_(from), to_(to), prefix_(std::move(prefix)), stop_at_ns_(std::numeric_limits<int64_t>::max()) {
  thread_ = std::thread([this] { run(); });
}

ProgramOutputForwarder::~ProgramOutputForwarder() {
  finish(std::chrono::milliseconds(0));
  close(from_);
}

void ProgramOutputForwarder::finish(std::chrono::milliseconds drain) {
  if (!thread_.joinable()) return;
  stop_at_ns_.store(nowNs() + std::chrono::duration_cast<std::chrono::nanoseconds>(drain).count());
  thread_.join();
}

void ProgramOutputForwarder::emit(std::string_view line) {
  std::string text = prefix_;
  text.append(line);
  text.push_back('\n');
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(to_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to write to: the line is lost, the program runs on
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void ProgramOutputForwarder::run() {
  std::string pending;
  char buffer[16 * 1024];
  while (nowNs() < stop_at_ns_.load()) {
    pollfd fd{from_, POLLIN, 0};
    int ready = poll(&fd, 1, kPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = read(from_, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // every writer has gone
    pending.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      emit(std::string_view(pending).substr(start, end - start));
    pending.erase(0, start);
    while (pending.size() >= kMaxLine) {
      emit(std::string_view(pending).substr(0, kMaxLine));
      pending.erase(0, kMaxLine);
    }
  }
  if (!pending.empty()) emit(pending);  // a last line without its newline
}

}  // namespace nk::cli
