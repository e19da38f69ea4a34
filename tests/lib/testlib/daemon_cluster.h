#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "testlib/daemon_process.h"

namespace nk::test {

// "n<i>": the name of a cluster's i-th node.
inline std::string nodeName(int i) { return "n" + std::to_string(i); }

// Daemons n1..n<count> as the nodes of one cluster, each on a loopback
// address of its own, 127.0.0.<base+i> with `base` one of 20, 30, .., 200
// drawn at random, so that test runs side by side rarely meet; a port that
// is taken (another run) is passed over. Killed (SIGKILL) when destroyed.
class DaemonCluster {
 public:
  // Flags for n<i>, after its --node-name and --listen.
  using Flags = std::function<std::vector<std::string>(int i)>;

  // Nodes' state directories go under `dir` (s1, s2, ..). `port_salt` puts
  // suites that may run at once on ports of their own.
  explicit DaemonCluster(std::filesystem::path dir, int port_salt = 0);
  DaemonCluster(const DaemonCluster&) = delete;
  DaemonCluster& operator=(const DaemonCluster&) = delete;
  ~DaemonCluster();

  // Starts n1..n<count>, after killing any started before. Empty when all
  // run, else which did not and their logs.
  std::string start(int count, const Flags& flags);
  // n<i> again, at its address and with its flags (after a kill9).
  bool restart(int i);
  void killAll();

  int size() const { return static_cast<int>(nodes_.size()) - 1; }
  DaemonProcess& node(int i) { return *nodes_[static_cast<size_t>(i)]; }
  const DaemonProcess& node(int i) const { return *nodes_[static_cast<size_t>(i)]; }
  std::string ip(int i) const { return "127.0.0." + std::to_string(base_ + i); }
  const std::string& address(int i) const { return addresses_[static_cast<size_t>(i)]; }
  std::filesystem::path nodeDir(int i) const { return dir_ / ("s" + std::to_string(i)); }
  // The first port offered to the nodes (each tries it, then every 7th
  // past it); stand-ins of a test take a few just past it.
  int port() const { return port_; }

  // mpirun's MPMD form: one rank per node, rank i-1 at n<i>, each told its
  // node's socket and given `env` (NAME=VALUE), with the PMPI agent.
  std::vector<std::string> mpirun(const std::vector<std::string>& env, const std::vector<std::string>& program) const;
  // Every node's log, each under a line naming it.
  std::string logs() const;

  // A peer token at `path`: 44 random base64 characters, mode 0600. Returns
  // the token.
  static std::string writePeerToken(const std::filesystem::path& path);

 private:
  bool launch(int i);

  std::filesystem::path dir_;
  int base_ = 20;
  int port_ = 20000;
  Flags flags_;
  std::vector<std::unique_ptr<DaemonProcess>> nodes_;  // [1..count]
  std::vector<std::string> addresses_;
};

}  // namespace nk::test
