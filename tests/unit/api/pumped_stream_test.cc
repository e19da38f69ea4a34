#include "api/pumped_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <functional>
#include <utility>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "testlib/wait_for.h"

namespace nk {
namespace {

// Stands in for gRPC's ServerWriteReactor: records what the stream asks of
// it; the test plays gRPC's part by calling OnWriteDone, OnCancel, OnDone.
class FakeReactor {
 public:
  virtual ~FakeReactor() = default;
  virtual void OnWriteDone(bool) {}
  virtual void OnCancel() {}
  virtual void OnDone() {}

  void StartWrite(const int* message) {
    std::lock_guard lock(mutex_);
    written_.push_back(*message);
    if (++in_flight_ > max_in_flight_) max_in_flight_ = in_flight_;
  }
  // A reading reactor's (ServerBidiReactor's) next read.
  void StartRead(int*) {
    std::lock_guard lock(mutex_);
    ++reads_;
    read_after_finish_ = read_after_finish_ || !statuses_.empty();
  }
  void Finish(grpc::Status status) {
    std::lock_guard lock(mutex_);
    statuses_.push_back(std::move(status));
    finished_while_writing_ = finished_while_writing_ || in_flight_ > 0;
  }
  // gRPC's side of a write that completed; false when none was in flight.
  bool completeWrite(bool ok) {
    {
      std::lock_guard lock(mutex_);
      if (in_flight_ == 0) return false;
      --in_flight_;
    }
    OnWriteDone(ok);
    return true;
  }

  std::vector<int> written() const {
    std::lock_guard lock(mutex_);
    return written_;
  }
  std::vector<grpc::Status> statuses() const {
    std::lock_guard lock(mutex_);
    return statuses_;
  }
  int inFlight() const {
    std::lock_guard lock(mutex_);
    return in_flight_;
  }
  int maxInFlight() const {
    std::lock_guard lock(mutex_);
    return max_in_flight_;
  }
  bool finishedWhileWriting() const {
    std::lock_guard lock(mutex_);
    return finished_while_writing_;
  }
  int reads() const {
    std::lock_guard lock(mutex_);
    return reads_;
  }
  bool readAfterFinish() const {
    std::lock_guard lock(mutex_);
    return read_after_finish_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<int> written_;
  std::vector<grpc::Status> statuses_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  bool finished_while_writing_ = false;
  int reads_ = 0;
  bool read_after_finish_ = false;
};

// Sends what is pushed; ends (OK) once told to and drained.
class QueueStream final : public PumpedStream<FakeReactor, int> {
 public:
  QueueStream(StreamHost& host, StreamHost::Slot slot, bool& destroyed)
      : PumpedStream(host, std::move(slot)), destroyed_(destroyed) {}
  ~QueueStream() override { destroyed_ = true; }

  void push(int value) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(value);
    }
    wake();
  }
  void endWhenDrained() {
    {
      std::lock_guard lock(mutex_);
      end_ = true;
    }
    wake();
  }
  int concurrentNexts() const { return max_concurrent_nexts_; }
  // Called (once) the first time next() finds nothing, as if another thread
  // pushed just then, while this one still holds the writer role.
  void onFirstEmpty(std::function<void()> hook) { on_first_empty_ = std::move(hook); }

 private:
  Step next(int& out, grpc::Status& status) override {
    int now = ++nexts_running_;
    if (now > max_concurrent_nexts_) max_concurrent_nexts_ = now;
    Step step = Step::kWait;
    {
      std::lock_guard lock(mutex_);
      if (!queue_.empty()) {
        out = queue_.front();
        queue_.pop_front();
        step = Step::kSend;
      } else if (end_) {
        status = grpc::Status(grpc::StatusCode::ABORTED, "drained");
        step = Step::kFinish;
      }
    }
    --nexts_running_;
    if (step == Step::kWait && on_first_empty_) std::exchange(on_first_empty_, nullptr)();
    return step;
  }

  bool& destroyed_;
  std::mutex mutex_;
  std::deque<int> queue_;
  bool end_ = false;
  std::atomic<int> nexts_running_{0};
  std::atomic<int> max_concurrent_nexts_{0};
  std::function<void()> on_first_empty_;
};

struct PumpedStreamTest : ::testing::Test {
  StreamHost host{StreamHost::Settings{.pump_period = std::chrono::milliseconds(1)}, nullptr};
  bool destroyed = false;

  QueueStream* make() {
    PeerCredentials peer;
    peer.uid = 1000;
    auto slot = host.admit(peer, "test");
    EXPECT_TRUE(slot);
    return host.adopt(std::make_unique<QueueStream>(host, std::move(*slot), destroyed));
  }
};

TEST_F(PumpedStreamTest, WritesOneMessageAtATimeInOrder) {
  QueueStream* stream = make();
  stream->start(QueueStream::Polling::kWhenWoken);
  for (int i = 1; i <= 5; ++i) stream->push(i);
  EXPECT_EQ(stream->written(), std::vector<int>({1})) << "the rest wait for the first write to complete";
  while (stream->completeWrite(true)) {
  }
  EXPECT_EQ(stream->written(), std::vector<int>({1, 2, 3, 4, 5}));
  EXPECT_EQ(stream->maxInFlight(), 1);
  EXPECT_TRUE(stream->statuses().empty());
  stream->endWhenDrained();
  ASSERT_EQ(stream->statuses().size(), 1u);
  EXPECT_EQ(stream->statuses()[0].error_code(), grpc::StatusCode::ABORTED);
  stream->OnDone();
  EXPECT_TRUE(destroyed);
}

TEST_F(PumpedStreamTest, AWakeWhileTheWriterLetsGoIsNotLost) {
  QueueStream* stream = make();
  stream->onFirstEmpty([stream] { stream->push(42); });
  stream->start(QueueStream::Polling::kWhenWoken);  // no pump to make up for a lost wake
  EXPECT_EQ(stream->written(), std::vector<int>({42}));
  stream->OnCancel();
  stream->OnDone();
}

TEST_F(PumpedStreamTest, FinishWaitsForTheWriteInFlight) {
  QueueStream* stream = make();
  stream->start(QueueStream::Polling::kWhenWoken);
  stream->push(1);
  stream->finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "over"));
  EXPECT_TRUE(stream->statuses().empty());
  stream->push(2);  // comes too late: nothing is written after the finish
  ASSERT_TRUE(stream->completeWrite(true));
  ASSERT_EQ(stream->statuses().size(), 1u);
  EXPECT_EQ(stream->statuses()[0].error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_FALSE(stream->finishedWhileWriting());
  EXPECT_EQ(stream->written(), std::vector<int>({1}));
  stream->finish(grpc::Status::OK);  // the first status stands, and Finish is called once
  EXPECT_EQ(stream->statuses().size(), 1u);
  stream->OnDone();
}

TEST_F(PumpedStreamTest, AFailedWriteEndsTheStreamCancelled) {
  QueueStream* stream = make();
  stream->start(QueueStream::Polling::kWhenWoken);
  stream->push(1);
  stream->push(2);
  ASSERT_TRUE(stream->completeWrite(false));
  ASSERT_EQ(stream->statuses().size(), 1u);
  EXPECT_EQ(stream->statuses()[0].error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(stream->written(), std::vector<int>({1}));
  stream->OnDone();
}

TEST_F(PumpedStreamTest, CancellationFinishesAnIdleStream) {
  QueueStream* stream = make();
  stream->start(QueueStream::Polling::kWhenWoken);
  stream->OnCancel();
  ASSERT_EQ(stream->statuses().size(), 1u);
  EXPECT_EQ(stream->statuses()[0].error_code(), grpc::StatusCode::CANCELLED);
  stream->OnDone();
  EXPECT_EQ(host.open(), 0u);
}

TEST_F(PumpedStreamTest, ThePumpFindsWhatArrivedWithoutAWake) {
  QueueStream* stream = make();
  stream->start(QueueStream::Polling::kEveryPeriod);
  EXPECT_EQ(host.pump().size(), 1u);
  stream->OnCancel();
  stream->OnDone();
  EXPECT_EQ(host.pump().size(), 0u) << "a finished stream leaves the pump before it is destroyed";
  EXPECT_TRUE(destroyed);
}

// Producers on several threads, gRPC's completions on another and the pump
// drive one stream: every message goes out once, in each producer's order,
// with never two writes in flight nor two next() at once. No pump: a wake
// lost while the writer lets go would leave messages unsent.
TEST_F(PumpedStreamTest, ManyWakersOneWriter) {
  QueueStream* stream = make();
  stream->start(QueueStream::Polling::kWhenWoken);
  constexpr int kProducers = 4, kEach = 5000;
  std::atomic<bool> done{false};
  std::thread completer([&] {
    while (!done) {
      if (!stream->completeWrite(true)) std::this_thread::yield();
    }
    while (stream->completeWrite(true)) {
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) stream->push(p * kEach + i);
    });
  for (auto& t : producers) t.join();
  for (int spins = 0; spins < 2000000 && stream->written().size() < size_t(kProducers * kEach); ++spins)
    std::this_thread::yield();
  done = true;
  completer.join();
  std::vector<int> written = stream->written();
  ASSERT_EQ(written.size(), size_t(kProducers * kEach));
  std::vector<int> last(kProducers, -1);
  std::vector<bool> seen(kProducers * kEach, false);
  for (int value : written) {
    ASSERT_FALSE(seen[value]) << value << " written twice";
    seen[value] = true;
    int producer = value / kEach;
    ASSERT_GT(value, last[producer]) << "producer " << producer << " out of order";
    last[producer] = value;
  }
  EXPECT_EQ(stream->maxInFlight(), 1);
  EXPECT_EQ(stream->concurrentNexts(), 1);
  stream->OnCancel();
  stream->OnDone();
}

}  // namespace
}  // namespace nk

namespace nk {
namespace {

using nk::test::waitFor;

// Reads what its client sends and sends nothing: the reading half alone.
class ReadingStream final : public PumpedStream<FakeReactor, int> {
 public:
  ReadingStream(StreamHost& host, StreamHost::Slot slot, bool& destroyed)
      : PumpedStream(host, std::move(slot)), destroyed_(destroyed) {}
  ~ReadingStream() override { destroyed_ = true; }
  // gRPC's side: a message arrived; the stream reads on.
  void messageRead() { readNext(&request_, "Test.Read"); }

 private:
  Step next(int&, grpc::Status&) override { return Step::kWait; }
  bool& destroyed_;
  int request_ = 0;
};

struct RateHeldStreamTest : ::testing::Test {
  std::vector<std::string> logged;
  std::mutex logged_mutex;
  StreamHost host{StreamHost::Settings{.messages_per_second = 20, .pump_period = std::chrono::milliseconds(1)},
                  [this](const std::string& line) {
                    std::lock_guard lock(logged_mutex);
                    logged.push_back(line);
                  }};
  bool destroyed = false;

  ReadingStream* make() {
    PeerCredentials peer;
    peer.uid = 1000;
    peer.pid = 4242;
    auto slot = host.admit(peer, "test");
    EXPECT_TRUE(slot);
    return host.adopt(std::make_unique<ReadingStream>(host, std::move(*slot), destroyed));
  }
};

TEST_F(RateHeldStreamTest, PastTheRateTheNextReadWaitsAndTheStreamLivesOn) {
  ReadingStream* stream = make();
  for (int i = 0; i < 20; ++i) stream->messageRead();
  EXPECT_EQ(stream->reads(), 20) << "the burst is read at once";
  stream->messageRead();
  EXPECT_EQ(stream->reads(), 20) << "the 21st message's successor waits for the rate";
  EXPECT_TRUE(waitFor([&] { return stream->reads() == 21; }, std::chrono::seconds(30)));
  EXPECT_TRUE(stream->statuses().empty()) << "slowed, not ended";
  {
    std::lock_guard lock(logged_mutex);
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_NE(logged[0].find("holding a Test.Read stream of uid 1000 (pid 4242) to 20 messages a second"),
              std::string::npos)
        << logged[0];
  }
  stream->messageRead();  // held again, and resumed again: the pump keeps looking
  EXPECT_TRUE(waitFor([&] { return stream->reads() == 22; }, std::chrono::seconds(30)));
  stream->OnCancel();
  stream->OnDone();
  EXPECT_TRUE(destroyed);
}

TEST_F(RateHeldStreamTest, AHeldReadNeverStartsAfterTheStreamFinishes) {
  ReadingStream* stream = make();
  for (int i = 0; i < 21; ++i) stream->messageRead();
  ASSERT_EQ(stream->reads(), 20);
  stream->finish(grpc::Status::OK);  // the client went away meanwhile
  ASSERT_EQ(stream->statuses().size(), 1u);
  // Past the hold (50 ms at 20 a second) and many pump periods.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(stream->reads(), 20);
  EXPECT_FALSE(stream->readAfterFinish());
  stream->OnDone();  // removes the pump's poll: nothing calls into the stream once it is gone
  EXPECT_TRUE(destroyed);
}

}  // namespace
}  // namespace nk
