#include "ending_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace nk::pmpi {

namespace {

// What the handler touches: fixed storage, lock-free atomics and plain
// file descriptors, all it may use (write, poll, read, sigaction, raise and
// clock_gettime are async-signal-safe; locks and allocation are not).
struct Slot {
  int signal = 0;
  struct sigaction previous {};
  bool installed = false;
};
std::array<Slot, EndingSignals::kSignals.size()> slots;
std::atomic<bool> in_use{false};
std::atomic<int> ending_signal{0};
std::atomic<std::atomic<int32_t>*> ending_mark{nullptr};

void mark(int signal) {
  if (std::atomic<int32_t>* word = ending_mark.load(std::memory_order_acquire))
    word->store(signal, std::memory_order_release);
}
std::atomic<bool> reporting{false};
std::atomic<int> request_write{-1};
std::atomic<int> ack_read{-1};
std::atomic<int> deadline_ms{0};
int request_read = -1, ack_write = -1;

int64_t monotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void drain(int fd) {
  char buffer[16];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
}

// The signal goes to the agent's thread; the handler waits for its answer
// (or the deadline), so that the report is out before the process ends.
void reportAndWait(int signal) {
  const int out = request_write.load(std::memory_order_acquire);
  const int in = ack_read.load(std::memory_order_acquire);
  if (out < 0 || in < 0) return;
  drain(in);  // a late answer to an earlier report that gave up waiting
  const char byte = static_cast<char>(signal);
  if (::write(out, &byte, 1) != 1) return;
  const int64_t until = monotonicMs() + deadline_ms.load(std::memory_order_relaxed);
  for (int64_t left = until - monotonicMs(); left > 0; left = until - monotonicMs()) {
    pollfd fd{in, POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(left));
    if (ready > 0) {
      drain(in);
      return;
    }
    if (ready < 0 && errno != EINTR) return;
  }
}

void toDefault(int signal) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal, &action, nullptr);
}

// What would have run without the agent.
// True when the process ends as this handler returns (the default action).
bool chain(const Slot& slot, int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = slot.previous;
  const bool with_info = (previous.sa_flags & SA_SIGINFO) != 0;
  if (!with_info && previous.sa_handler == SIG_IGN) return false;
  if (!with_info && previous.sa_handler == SIG_DFL) {
    // The signal is blocked while its handler runs: raised again, it is
    // delivered, with its default action, when this handler returns.
    toDefault(signal);
    ::raise(signal);
    return true;
  }
  if (previous.sa_flags & SA_RESETHAND) toDefault(signal);
  if (with_info)
    previous.sa_sigaction(signal, info, context);
  else
    previous.sa_handler(signal);
  return false;
}

void onSignal(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const Slot* slot = nullptr;
  for (const Slot& s : slots)
    if (s.signal == signal && s.installed) slot = &s;
  if (!slot) return;
  // Once, for the first of them: a second signal (SIGTERM after SIGINT)
  // does not wait again.
  bool first = !reporting.exchange(true, std::memory_order_acq_rel);
  if (first) {
    ending_signal.store(signal, std::memory_order_release);
    mark(signal);
    reportAndWait(signal);
  }
  errno = saved_errno;
  const bool ends = chain(*slot, signal, info, context);
  // Ending: the mark stays for the daemon to read after the process is gone.
  if (first && !ends) {
    // The program's handler returned: the process goes on.
    ending_signal.store(0, std::memory_order_release);
    mark(0);
    reporting.store(false, std::memory_order_release);
  }
}

bool isOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) && action.sa_sigaction == &onSignal;
}

void closeAll() {
  for (std::atomic<int>* fd : {&request_write, &ack_read}) {
    int old = fd->exchange(-1);
    if (old >= 0) ::close(old);
  }
  for (int* fd : {&request_read, &ack_write}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

}  // namespace

int EndingSignals::ending() { return ending_signal.load(std::memory_order_acquire); }

void EndingSignals::markInto(std::atomic<int32_t>* word) { ending_mark.store(word, std::memory_order_release); }

EndingSignals::EndingSignals(Key, Report report) : report_(std::move(report)) {}

std::unique_ptr<EndingSignals> EndingSignals::install(Report report, std::chrono::milliseconds deadline) {
  if (in_use.exchange(true)) return nullptr;
  int request[2], ack[2];
  if (::pipe2(request, O_CLOEXEC) != 0) {
    in_use.store(false);
    return nullptr;
  }
  if (::pipe2(ack, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(request[0]);
    ::close(request[1]);
    in_use.store(false);
    return nullptr;
  }
  ::fcntl(request[1], F_SETFL, O_NONBLOCK);
  request_read = request[0];
  ack_write = ack[1];
  request_write.store(request[1], std::memory_order_release);
  ack_read.store(ack[0], std::memory_order_release);
  deadline_ms.store(static_cast<int>(deadline.count()), std::memory_order_relaxed);
  ending_signal.store(0);
  reporting.store(false);

  auto self = std::make_unique<EndingSignals>(Key{}, std::move(report));
  // The thread must never take these signals itself: its handler would wait
  // for the very thread it runs on.
  sigset_t ours, before;
  sigemptyset(&ours);
  for (int signal : kSignals) sigaddset(&ours, signal);
  pthread_sigmask(SIG_BLOCK, &ours, &before);
  EndingSignals* raw = self.get();
  self->thread_ = std::thread([raw] { raw->run(); });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);

  for (size_t i = 0; i < kSignals.size(); ++i) {
    Slot& slot = slots[i];
    slot.signal = kSignals[i];
    slot.installed = false;
    if (::sigaction(slot.signal, nullptr, &slot.previous) != 0) continue;
    const bool with_info = (slot.previous.sa_flags & SA_SIGINFO) != 0;
    // Ignored stays ignored: the signal ends nothing.
    if (!with_info && slot.previous.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_sigaction = &onSignal;
    action.sa_mask = slot.previous.sa_mask;
    // The program's own flags (SA_RESTART or not, SA_ONSTACK) stay as they
    // were; SA_RESETHAND is done by chain(), after the report.
    action.sa_flags = (slot.previous.sa_flags & ~(SA_RESETHAND | SA_NODEFER)) | SA_SIGINFO;
    if (!with_info && slot.previous.sa_handler == SIG_DFL) action.sa_flags |= SA_RESTART;
    slot.installed = true;  // before the handler can run
    if (::sigaction(slot.signal, &action, nullptr) != 0) slot.installed = false;
  }
  return self;
}

EndingSignals::~EndingSignals() {
  markInto(nullptr);  // the word may be unmapped next
  for (Slot& slot : slots) {
    if (!slot.installed) continue;
    struct sigaction current {};
    // A handler the program installed since stays.
    if (::sigaction(slot.signal, nullptr, &current) == 0 && isOurs(current))
      ::sigaction(slot.signal, &slot.previous, nullptr);
  }
  const int out = request_write.load();
  const char stop = 0;
  if (out >= 0 && ::write(out, &stop, 1) != 1) {
  }
  if (thread_.joinable()) thread_.join();
  // A handler of another thread may still be on its way: it finds -1.
  closeAll();
  for (Slot& slot : slots) slot.installed = false;
  in_use.store(false);
}

void EndingSignals::run() {
  while (true) {
    char byte = 0;
    ssize_t n = ::read(request_read, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == 0) return;
    report_(static_cast<unsigned char>(byte));
    const char ack = byte;
    if (::write(ack_write, &ack, 1) != 1) {
    }
  }
}

}  // namespace nk::pmpi
