// A hostile local user's client for the stream-limit test, run as root and
// dropping to the uid it is given before gRPC starts:
//   stream_holder UID hold SOCKET CONNECTIONS STREAMS_PER_CONNECTION INTERVAL_MS
//     opens CONNECTIONS connections (one gRPC channel each) with that many
//     telemetry streams each, reads one message from each and no more, prints
//     "settled admitted=A refused=R other=O" once every stream has answered
//     or ended, and holds them until killed.
//   stream_holder UID flood SOCKET N
//     sends N empty task batches on one Publish stream as fast as it can,
//     closes it and prints "ended CODE sent=N seconds=S" once the daemon
//     has read them all (or ended the stream).
//   stream_holder UID big SOCKET BYTES
//     sends one task batch of about BYTES and prints "ended CODE".
#include <grp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nodekeeper/v1/node.grpc.pb.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace v1 = nodekeeper::v1;

namespace {

struct Tally {
  std::atomic<int> admitted{0}, refused{0}, other{0}, done{0};
  // The status codes of the "other" streams, so that a failure says them.
  std::array<std::atomic<int>, 17> other_codes{};
};

// One telemetry stream that reads its first message and then nothing more:
// what the daemon sends next waits in the flow-control window.
class UnreadStream final : public grpc::ClientReadReactor<v1::TelemetrySnapshot> {
 public:
  UnreadStream(v1::NodeService::Stub& stub, uint32_t interval_ms, Tally& tally) : tally_(tally) {
    request_.set_interval_ms(interval_ms);
    // A connection the daemon's listen queue could not take at once (a
    // thousand open together on a busy host) waits and tries again, as a
    // client would: it is no refusal (432 of 3,000 ended UNAVAILABLE so).
    context_.set_wait_for_ready(true);
    stub.async()->StreamTelemetry(&context_, &request_, this);
    StartRead(&snapshot_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    answered_ = true;
    ++tally_.admitted;
  }
  void OnDone(const grpc::Status& status) override {
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
      ++tally_.refused;
    else if (!answered_) {
      ++tally_.other;
      ++tally_.other_codes[std::min<size_t>(static_cast<size_t>(status.error_code()), tally_.other_codes.size() - 1)];
    }
    ++tally_.done;
  }
 private:
  std::atomic<bool> answered_{false};
  Tally& tally_;
  grpc::ClientContext context_;
  v1::StreamTelemetryRequest request_;
  v1::TelemetrySnapshot snapshot_;
};

std::shared_ptr<grpc::Channel> channelTo(const std::string& socket) {
  grpc::ChannelArguments args;
  // A connection of its own for every channel.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

int hold(const std::string& socket, int connections, int per_connection, uint32_t interval_ms) {
  Tally tally;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::NodeService::Stub>> stubs;
  std::vector<std::unique_ptr<UnreadStream>> streams;
  for (int c = 0; c < connections; ++c) {
    channels.push_back(channelTo(socket));
    stubs.push_back(v1::NodeService::NewStub(channels.back()));
    for (int s = 0; s < per_connection; ++s)
      streams.push_back(std::make_unique<UnreadStream>(*stubs.back(), interval_ms, tally));
  }
  const int total = connections * per_connection;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (tally.admitted + tally.refused + tally.other < total && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::cout << "settled admitted=" << tally.admitted << " refused=" << tally.refused << " other=" << tally.other;
  for (size_t code = 0; code < tally.other_codes.size(); ++code)
    if (tally.other_codes[code] > 0) std::cout << " other_code_" << code << "=" << tally.other_codes[code];
  std::cout << std::endl;
  // Held until killed: the reactors must outlive their calls, so they are
  // never destroyed here.
  while (true) pause();
}

int flood(const std::string& socket, long messages) {
  auto stub = v1::TasksService::NewStub(channelTo(socket));
  grpc::ClientContext context;
  const auto start = std::chrono::steady_clock::now();
  auto stream = stub->Publish(&context);
  v1::TaskEventBatch empty;
  long sent = 0;
  while (sent < messages && stream->Write(empty)) ++sent;
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "ended " << status.error_code() << " sent=" << sent << " seconds=" << seconds << " "
            << status.error_message() << std::endl;
  return 0;
}

int big(const std::string& socket, size_t bytes) {
  auto stub = v1::TasksService::NewStub(channelTo(socket));
  grpc::ClientContext context;
  auto stream = stub->Publish(&context);
  v1::TaskEventBatch batch;
  auto* function = batch.add_functions();
  function->set_key(1);
  function->set_name(std::string(bytes, 'x'));
  stream->Write(batch);
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  std::cout << "ended " << status.error_code() << " " << status.error_message() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: stream_holder UID hold|flood|big SOCKET ...\n";
    return 2;
  }
  const uid_t uid = static_cast<uid_t>(std::stoul(argv[1]));
  const std::string mode = argv[2], socket = argv[3];
  rlimit room{65536, 65536};
  setrlimit(RLIMIT_NOFILE, &room);
  if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) {
    std::cerr << "stream_holder: cannot become uid " << uid << "\n";
    return 3;
  }
  if (mode == "hold" && argc == 7) return hold(socket, std::atoi(argv[4]), std::atoi(argv[5]), std::atoi(argv[6]));
  if (mode == "flood" && argc == 5) return flood(socket, std::stol(argv[4]));
  if (mode == "big" && argc == 5) return big(socket, std::stoul(argv[4]));
  std::cerr << "stream_holder: bad arguments\n";
  return 2;
}
