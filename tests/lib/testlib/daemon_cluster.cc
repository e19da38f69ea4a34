#include "testlib/daemon_cluster.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "testlib/tcp_address.h"
#include "testlib/test_env.h"

namespace nk::test {

DaemonCluster::DaemonCluster(std::filesystem::path dir, int port_salt) : dir_(std::move(dir)) {
  std::random_device random;
  base_ = 20 + 10 * static_cast<int>(random() % 19);
  port_ = 20000 + static_cast<int>((getpid() + port_salt) % 20000);
}

DaemonCluster::~DaemonCluster() { killAll(); }

void DaemonCluster::killAll() {
  for (auto& node : nodes_)
    if (node) node->kill9();
}

bool DaemonCluster::launch(int i) {
  std::vector<std::string> argv = {"--node-name", nodeName(i), "--listen", address(i)};
  for (auto& flag : flags_(i)) argv.push_back(flag);
  return node(i).start(nodeDir(i), argv);
}

std::string DaemonCluster::start(int count, const Flags& flags) {
  killAll();
  flags_ = flags;
  nodes_.clear();
  nodes_.resize(static_cast<size_t>(count) + 1);
  addresses_.assign(static_cast<size_t>(count) + 1, "");
  std::string failures;
  for (int i = 1; i <= count; ++i) {
    nodes_[static_cast<size_t>(i)] = std::make_unique<DaemonProcess>();
    std::filesystem::create_directories(nodeDir(i));
    bool started = false;
    std::string errors;
    for (int attempt = 0; attempt < 20 && !started; ++attempt) {
      const int port = port_ + attempt * 7;
      if (!addressFree(ip(i), port)) continue;
      addresses_[static_cast<size_t>(i)] = ip(i) + ":" + std::to_string(port);
      started = launch(i);
      if (!started) errors += node(i).lastError();
    }
    if (!started) failures += "daemon " + nodeName(i) + " did not start: " + errors + "\n";
  }
  return failures;
}

bool DaemonCluster::restart(int i) { return launch(i); }

std::vector<std::string> DaemonCluster::mpirun(const std::vector<std::string>& env,
                                               const std::vector<std::string>& program) const {
  std::vector<std::string> argv = {"mpirun", "--oversubscribe", "--bind-to", "none", "--enable-recovery"};
  const std::vector<std::string> agent = pmpiAgentMpirunArgs();
  for (int i = 1; i <= size(); ++i) {
    if (i > 1) argv.push_back(":");
    argv.insert(argv.end(), {"-np", "1", "-x", "NODEKEEPER_SOCKET=" + node(i).socket().string()});
    for (const std::string& variable : env) argv.insert(argv.end(), {"-x", variable});
    argv.insert(argv.end(), agent.begin(), agent.end());
    argv.insert(argv.end(), program.begin(), program.end());
  }
  return argv;
}

std::string DaemonCluster::logs() const {
  std::string out;
  for (int i = 1; i <= size(); ++i)
    if (nodes_[static_cast<size_t>(i)]) out += "--- " + nodeName(i) + ":\n" + node(i).lastError();
  return out;
}

std::string DaemonCluster::writePeerToken(const std::filesystem::path& path) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::random_device random;
  std::string token;
  for (int i = 0; i < 44; ++i) token.push_back(kAlphabet[random() % 64]);
  std::ofstream(path) << token << "\n";
  ::chmod(path.c_str(), 0600);
  return token;
}

}  // namespace nk::test
