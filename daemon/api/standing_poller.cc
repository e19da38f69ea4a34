#include "api/standing_poller.h"

#include <pthread.h>

#include <grpcpp/grpcpp.h>

namespace nk {

StandingPoller::StandingPoller(grpc::ServerBuilder& builder)
    : queue_(builder.AddCompletionQueue(/*is_frequently_polled=*/true)) {}

StandingPoller::~StandingPoller() {
  if (!queue_) return;
  queue_->Shutdown();
  if (thread_.joinable()) {
    thread_.join();  // it drained the queue
    return;
  }
  // Never started (the server did not): drained here, as gRPC asks of a
  // queue before it goes.
  void* tag = nullptr;
  bool ok = false;
  while (queue_->Next(&tag, &ok)) {
  }
}

void StandingPoller::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([queue = queue_.get()] {
    pthread_setname_np(pthread_self(), "nk-grpc-poll");
    void* tag = nullptr;
    bool ok = false;
    while (queue->Next(&tag, &ok)) {
    }
  });
}

}  // namespace nk
