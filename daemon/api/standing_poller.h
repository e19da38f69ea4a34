#pragma once

#include <memory>
#include <thread>

namespace grpc {
class ServerBuilder;
class ServerCompletionQueue;
}  // namespace grpc

namespace nk {

// One thread that polls a server's connections and never pauses.
//
// A server with both synchronous and callback methods (the daemon's Unix
// socket server) gets completion queues for its synchronous calls that do not poll: gRPC
// 1.51 leaves polling to the callback queue's "nexting" threads, which wait
// for a callback event at most a second and then sleep 100 ms. With no
// stream open they time out together, and for those 100 ms nothing reads
// the sockets: once a second a unary call (a heartbeat, a probe, a
// telemetry read) waited up to 100 ms. This thread waits on a polling queue
// of its own with no deadline, so there is always a poller. Nothing is ever
// requested on that queue: its only event is the shutdown.
class StandingPoller {
 public:
  // Before BuildAndStart: adds the queue to the server.
  explicit StandingPoller(grpc::ServerBuilder& builder);
  // Shuts the queue down and joins the thread: only after the server's
  // Shutdown (gRPC's order for a server's queues).
  ~StandingPoller();
  StandingPoller(const StandingPoller&) = delete;
  StandingPoller& operator=(const StandingPoller&) = delete;

  // After BuildAndStart.
  void start();

 private:
  std::unique_ptr<grpc::ServerCompletionQueue> queue_;
  std::thread thread_;
};

}  // namespace nk
