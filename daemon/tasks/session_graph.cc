#include "tasks/session_graph.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "taskgraph/recording_format.h"

namespace nk {

namespace {

// Past this a released graph is worth handing back to the system at once:
// the daemon keeps a high trim threshold (MallocTuning), so freed memory
// would otherwise stay in the heap until the next big free.
constexpr size_t kTrimAfterBytes = size_t{16} << 20;

}  // namespace

SessionGraph::SessionGraph(std::atomic<uint64_t>& pending_total, size_t max_tasks, IdlePriority* idle)
    : pending_total_(pending_total), idle_(idle), graph_(max_tasks) {}

SessionGraph::~SessionGraph() {
  pending_total_.fetch_sub(pendingBytes(), std::memory_order_relaxed);
  if (recording_fd_ >= 0) ::close(recording_fd_);
}

bool SessionGraph::readFrom(const std::filesystem::path& recording) {
  const int fd = ::open(recording.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  IdlePriority::Lock lock(idle_, graph_mutex_, idle_holds_graph_);
  if (recording_fd_ >= 0) ::close(recording_fd_);
  recording_fd_ = fd;
  return true;
}

void SessionGraph::queueRecorded(uint64_t offset, uint32_t size) {
  IdlePriority::Lock lock(idle_, queue_mutex_, idle_holds_queue_);
  queue_.push_back({{}, offset, size});
  queued_batches_.store(queue_.size(), std::memory_order_relaxed);
}

std::string SessionGraph::load(Queued& queued) {
  if (!queued.frame.empty()) {
    frame_ = std::move(queued.frame);
    return {};
  }
  if (recording_fd_ < 0) return "the recording is not open for reading";
  frame_.resize(queued.size);
  size_t done = 0;
  while (done < queued.size) {
    const ssize_t n = ::pread(recording_fd_, frame_.data() + done, queued.size - done,
                              static_cast<off_t>(queued.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string("cannot read the recording back: ") + std::strerror(errno);
    if (n == 0) return "the recording ends before a frame it was written";
    done += static_cast<size_t>(n);
  }
  return {};
}

void SessionGraph::queue(std::vector<std::byte> frame) {
  const uint64_t bytes = frame.size();
  {
    IdlePriority::Lock lock(idle_, queue_mutex_, idle_holds_queue_);
    queue_.push_back({std::move(frame), 0, 0});
    queued_batches_.store(queue_.size(), std::memory_order_relaxed);
    queued_bytes_ += bytes;
  }
  pending_total_.fetch_add(bytes, std::memory_order_relaxed);
}

uint64_t SessionGraph::pendingBytes() const {
  IdlePriority::Lock lock(idle_, queue_mutex_, idle_holds_queue_);
  return queued_bytes_;
}

bool SessionGraph::takeNext() {
  Queued queued;
  {
    IdlePriority::Lock lock(idle_, queue_mutex_, idle_holds_queue_);
    if (queue_.empty()) return false;
    queued = std::move(queue_.front());
    queue_.pop_front();
    queued_batches_.store(queue_.size(), std::memory_order_relaxed);
    queued_bytes_ -= queued.frame.size();
  }
  pending_total_.fetch_sub(queued.frame.size(), std::memory_order_relaxed);
  events_.clear();
  applied_ = 0;
  if (released_) return true;
  std::string fault = load(queued);
  if (fault.empty()) fault = zstd_.decompress(frame_, payload_, kMaxFramePayload);
  if (fault.empty() && !batch_.ParseFromArray(payload_.data(), static_cast<int>(payload_.size())))
    fault = "a queued batch does not parse";
  if (fault.empty()) fault = translator_.toGraphEvents(batch_, events_);
  if (!fault.empty()) {
    events_.clear();
    ++faults_;
    last_fault_ = fault;
  }
  return true;
}

size_t SessionGraph::step(size_t budget) {
  size_t taken = 0;
  while (taken < budget) {
    if (applied_ == events_.size() && !takeNext()) break;
    const size_t end = std::min(events_.size(), applied_ + (budget - taken));
    for (size_t i = applied_; i < end; ++i) graph_.apply(events_[i]);
    // An empty batch counts one, so that a run of them still ends a step.
    taken += std::max<size_t>(end - applied_, 1);
    events_applied_ += end - applied_;
    applied_ = end;
  }
  partly_taken_.store(applied_ < events_.size(), std::memory_order_relaxed);
  return taken;
}

size_t SessionGraph::build(size_t max_events) {
  size_t built = 0;
  while (built < max_events) {
    // Lifted for a reader during the last slice: idle again before the next.
    if (idle_ && idle_->onIdleThread()) idle_->settle();
    IdlePriority::Lock lock(idle_, graph_mutex_, idle_holds_graph_);
    const size_t taken = step(std::min(kSliceEvents, max_events - built));
    if (taken == 0) break;
    built += taken;
  }
  return built;
}

void SessionGraph::look(const std::function<void(const TaskGraph&)>& look) {
  IdlePriority::Lock lock(idle_, graph_mutex_, idle_holds_graph_);
  while (step(SIZE_MAX) > 0) {
  }
  look(graph_);
}

SessionGraph::Counts SessionGraph::counts() const {
  IdlePriority::Lock lock(idle_, graph_mutex_, idle_holds_graph_);
  return released_ ? released_counts_ : countsNow();
}

SessionGraph::Counts SessionGraph::countsNow() const {
  return {graph_.totalTasks(), graph_.totalEdges(), events_applied_, graph_.countsByState(), faults_,
          graph_.tasksNotHeld(), graph_.maxHeld(), graph_.dependencesNotHeld(), translator_.namesNotKept(),
          graph_.functionsNotKept()};
}

SessionGraph::Counts SessionGraph::release() {
  IdlePriority::Lock lock(idle_, graph_mutex_, idle_holds_graph_);
  if (released_) return released_counts_;
  // The batch a builder has taken off the queue is no longer "pending" to a
  // caller that looked just before this lock: it is finished here, so no
  // count stops part way through a batch (a lossless session came out up to
  // a batch short of its program's tasks).
  for (size_t i = applied_; i < events_.size(); ++i) graph_.apply(events_[i]);
  events_applied_ += events_.size() - applied_;
  applied_ = events_.size();
  released_counts_ = countsNow();
  released_ = true;
  const bool big = graph_.approximateBytes() > kTrimAfterBytes;
  graph_ = TaskGraph();
  translator_ = TaskEventTranslator();
  // Fresh objects, not `= {}`: for a vector that picks the assignment from
  // an empty initializer list, which keeps the capacity (the scratch of
  // the last batch, some 10 MB a session that stayed in a daemon that
  // outlives many programs).
  frame_ = std::vector<std::byte>();
  payload_ = std::vector<std::byte>();
  events_ = std::vector<GraphEvent>();
  batch_ = nodekeeper::v1::TaskEventBatch();
  zstd_ = ZstdFrames();  // its decompression context, some 100 KB
  applied_ = 0;
  partly_taken_.store(false, std::memory_order_relaxed);
  {
    IdlePriority::Lock queue_lock(idle_, queue_mutex_, idle_holds_queue_);
    pending_total_.fetch_sub(queued_bytes_, std::memory_order_relaxed);
    queue_.clear();
    queued_batches_.store(0, std::memory_order_relaxed);
    queued_bytes_ = 0;
  }
  if (big) malloc_trim(0);
  return released_counts_;
}

size_t SessionGraph::heldBytes() const {
  IdlePriority::Lock lock(idle_, graph_mutex_, idle_holds_graph_);
  return graph_.approximateBytes() + frame_.capacity() + payload_.capacity() +
         events_.capacity() * sizeof(GraphEvent) + batch_.SpaceUsedLong() + zstd_.contextBytes();
}

std::string SessionGraph::lastFault() const {
  IdlePriority::Lock lock(idle_, graph_mutex_, idle_holds_graph_);
  return last_fault_;
}

}  // namespace nk
