#include "task_shipper.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace v1 = nodekeeper::v1;

namespace nk::client {

namespace {

constexpr auto kInterval = std::chrono::milliseconds(5);
constexpr auto kRetry = std::chrono::seconds(1);
constexpr size_t kDrainChunk = 4096;

void say(const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace

// The Publish stream and what it needs; rebuilt after a failure.
struct TaskShipper::Link {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::TasksService::Stub> stub;
  std::unique_ptr<grpc::ClientContext> context;
  v1::PublishAck ack;
  std::unique_ptr<grpc::ClientWriter<v1::TaskEventBatch>> writer;
  std::chrono::steady_clock::time_point next_attempt{};
  // Reused between sends: a cleared repeated field keeps its messages, so
  // steady shipping allocates nothing per event.
  std::vector<TaskEventRecord> records = std::vector<TaskEventRecord>(kDrainChunk);
  v1::TaskEventBatch batch;
};

TaskShipper::TaskShipper(TaskCapture& capture, std::string socket_path, bool debug)
    : capture_(capture), socket_path_(std::move(socket_path)), debug_(debug), link_(std::make_unique<Link>()) {}

TaskShipper::~TaskShipper() { stop(std::chrono::milliseconds(500)); }

void TaskShipper::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void TaskShipper::stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (link_->writer) {
    // A daemon that hangs must not hold the program at exit: Finish runs
    // on a helper thread and is cancelled after `grace`.
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> finished = done->get_future();
    Link* link = link_.get();
    std::thread closer([link, done] {
      link->writer->WritesDone();
      (void)link->writer->Finish();
      done->set_value();
    });
    if (finished.wait_for(grace) != std::future_status::ready) link->context->TryCancel();
    closer.join();
  }
  uint64_t dropped = 0;
  for (const auto& t : capture_.threads()) dropped += t->ring.dropped();
  if (lost_ > 0 || dropped > 0 || debug_)
    say("nodekeeper: task events: " + std::to_string(shipped_) + " sent, " + std::to_string(lost_) +
        " lost (no daemon), " + std::to_string(dropped) + " dropped (lossy buffers full)");
}

// A task's name: the function that holds its construct and the construct's
// offset in it, from the code address OMPT reports (dladdr sees exported symbols: link programs with
// -rdynamic for their own functions), else the address itself.
std::string TaskShipper::functionName(uint64_t code_address) {
  if (code_address == 0) return {};
  auto [it, inserted] = names_.try_emplace(code_address);
  if (!inserted) return it->second;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(code_address), &info) && info.dli_sname) {
    int status = -1;
    char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    it->second = status == 0 && demangled ? demangled : info.dli_sname;
    std::free(demangled);
    // OMPT names the task construct's call site, not the task's body: the
    // offset tells two constructs in one function apart.
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%llx",
                  static_cast<unsigned long long>(code_address - reinterpret_cast<uint64_t>(info.dli_saddr)));
    it->second += offset;
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(code_address));
    it->second = buf;
  }
  return it->second;
}

void TaskShipper::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    bool stopping = stopping_;
    lock.unlock();
    bool more = shipOnce();
    lock.lock();
    if (stopping && !more) return;
    if (!more) wake_.wait_for(lock, kInterval, [&] { return stopping_; });
  }
}

// Empties the rings once; true when a ring had more than one chunk (go
// again at once).
bool TaskShipper::shipOnce() {
  Link& link = *link_;
  auto now = std::chrono::steady_clock::now();
  if (!link.writer && now >= link.next_attempt && std::filesystem::exists(socket_path_)) {
    link.channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
    link.stub = v1::TasksService::NewStub(link.channel);
    link.context = std::make_unique<grpc::ClientContext>();
    link.writer = link.stub->Publish(link.context.get(), &link.ack);
  }
  if (!link.writer) link.next_attempt = now + kRetry;

  std::vector<TaskEventRecord>& records = link.records;
  v1::TaskEventBatch& batch = link.batch;
  batch.Clear();
  bool more = false;
  for (const auto& thread : capture_.threads()) {
    size_t n = thread->ring.drain(records);
    more = more || n == records.size();
    for (size_t i = 0; i < n; ++i) {
      const TaskEventRecord& r = records[i];
      v1::TaskEvent* e = batch.add_events();
      e->set_timestamp_ns(static_cast<int64_t>(r.timestamp_ns));
      e->set_thread(thread->slot);
      switch (r.type) {
        case TaskEventType::kCreated: {
          auto* c = e->mutable_created();
          c->set_task_id(r.task_id);
          c->set_parent_id(r.a);
          c->set_function(functionName(r.b));
          c->set_priority(static_cast<int32_t>(static_cast<int64_t>(r.c)));
          break;
        }
        case TaskEventType::kDependence: {
          auto* d = e->mutable_dependency();
          d->set_from_task(r.a);
          d->set_to_task(r.task_id);
          d->set_address(r.b);
          d->set_kind(static_cast<v1::DependenceKind>(r.c));
          break;
        }
        case TaskEventType::kQueued: e->mutable_queued()->set_task_id(r.task_id); break;
        case TaskEventType::kStarted: e->mutable_started()->set_task_id(r.task_id); break;
        case TaskEventType::kFinished: e->mutable_finished()->set_task_id(r.task_id); break;
        case TaskEventType::kFailed: e->mutable_failed()->set_task_id(r.task_id); break;
        case TaskEventType::kSync: {
          auto* s = e->mutable_sync();
          s->set_kind(static_cast<v1::TaskSync::Kind>(r.a));
          s->set_task_id(r.task_id);
          s->set_end(r.b != 0);
          break;
        }
        case TaskEventType::kRegionBegin:
        case TaskEventType::kRegionEnd: e->mutable_region()->set_end(r.type == TaskEventType::kRegionEnd); break;
      }
    }
  }
  if (batch.events_size() == 0) return more;
  if (link.writer && link.writer->Write(batch)) {
    shipped_ += static_cast<uint64_t>(batch.events_size());
    return more;
  }
  if (link.writer) {
    link.writer.reset();  // the daemon went away: try again later
    link.next_attempt = now + kRetry;
  }
  lost_ += static_cast<uint64_t>(batch.events_size());
  if (!said_lost_) {
    said_lost_ = true;
    say("nodekeeper: task events are not reaching nodekeeperd (" + socket_path_ +
        "); the program runs on unchanged");
  }
  return more;
}

}  // namespace nk::client
