#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "cli/tasks_client.h"
#include "base/result.h"

namespace nodekeeper::v1 {
class FrequencyPolicies;
}

namespace nk::cli {

struct Invocation;
class AppsClient;
class TasksClient;
class FaultsClient;
class NodeClient;

// Carries out a parsed command: calls the daemon, prints the result, and
// returns the exit code (0, or 1 after one error line on `err`).
class CommandRunner {
 public:
  // A command built outside nk_cli (`ui`, in nk_ui, which uses nk_cli's
  // clients); without one the command says it is not built in.
  using ExternalCommand = std::function<int(const Invocation&, std::ostream& out, std::ostream& err)>;

  CommandRunner(std::ostream& out, std::ostream& err, bool out_is_terminal, ExternalCommand ui = {});

  int run(const Invocation& invocation);

 private:
  int dispatch(const Invocation& invocation, NodeClient& client, AppsClient& apps_client, TasksClient& tasks_client,
               FaultsClient& faults_client);
  int status(const Invocation& invocation, NodeClient& client);
  int watch(const Invocation& invocation, NodeClient& client);
  int freqGet(const Invocation& invocation, NodeClient& client, bool governors_only);
  int showFrequencyReply(const Invocation& invocation, const nodekeeper::v1::FrequencyPolicies& reply);
  int freqSet(const Invocation& invocation, NodeClient& client);
  int governorSet(const Invocation& invocation, NodeClient& client);
  int powerCapGet(const Invocation& invocation, NodeClient& client);
  int powerCapSet(const Invocation& invocation, NodeClient& client);
  int policyGet(const Invocation& invocation, NodeClient& client);
  int policySet(const Invocation& invocation, NodeClient& client);
  int whoAmI(const Invocation& invocation, NodeClient& client);
  int apps(const Invocation& invocation, AppsClient& client);
  int tasks(const Invocation& invocation, TasksClient& client);
  Result<RecordedGraph> recordedGraph(const Invocation& invocation, TasksClient& client, std::string_view command);
  int tasksStats(const Invocation& invocation, TasksClient& client);
  int exportSession(const Invocation& invocation, TasksClient& client);
  int exportStreamed(const Invocation& invocation, TasksClient& client, const std::string& format,
                     const std::string& path);
  // SESSION's events, batch by batch, from its recording's file or the
  // daemon (as recordedGraph finds it), without building its graph. The
  // result is where the recording stopped being readable ("": read whole).
  Result<std::string> recordedEvents(const Invocation& invocation, TasksClient& client, std::string_view command,
                                     std::string* label,
                                     const std::function<void(std::span<const GraphEvent>)>& on_events);
  int graph(const Invocation& invocation, TasksClient& client);
  int graphWatch(const Invocation& invocation, TasksClient& client, const std::string& format,
                 const std::string& path);
  int jobs(const Invocation& invocation, FaultsClient& client);
  int symptoms(const Invocation& invocation, FaultsClient& client);
  int faults(const Invocation& invocation, FaultsClient& client);
  int writeOutput(std::string_view command, const std::string& path, std::string_view text);
  int budget(const Invocation& invocation, AppsClient& client);
  int appPolicyGet(const Invocation& invocation, AppsClient& client);
  int appPolicySet(const Invocation& invocation, AppsClient& client);

  int fail(const std::string& message);

  std::ostream& out_;
  std::ostream& err_;
  bool out_is_terminal_;
  ExternalCommand ui_;
};

}  // namespace nk::cli
