#pragma once

#include <iosfwd>
#include <string>

#include "base/result.h"
#include "nodekeeper/v1/jobs.pb.h"

namespace nk::cli {

struct Invocation;
class JobsClient;

// "job begin", "job attach", "job end": what a scheduler's plugin (root)
// tells the daemon of a job. Requests are built and checked here, so that
// a bad flag is one line before any call.
class JobCommands {
 public:
  static Result<nodekeeper::v1::BeginJobRequest> beginRequest(const Invocation& invocation);
  static Result<nodekeeper::v1::AttachProcessRequest> attachRequest(const Invocation& invocation);
  static Result<nodekeeper::v1::EndJobRequest> endRequest(const Invocation& invocation);

  static std::string jobText(const nodekeeper::v1::Job& job);
  static std::string jobJson(const nodekeeper::v1::Job& job);

  // Runs the invocation's job command: 0, or 1 after one line on `err`.
  static int run(const Invocation& invocation, JobsClient& client, std::ostream& out, std::ostream& err);
};

}  // namespace nk::cli
