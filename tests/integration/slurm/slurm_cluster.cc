#include "slurm_cluster.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "testlib/tcp_address.h"
#include "testlib/wait_for.h"

namespace nk::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string host = name;
  return host.substr(0, host.find('.'));
}

// Two free consecutive ports on 127.0.0.1 (slurmctld's and slurmd's).
int freePortPair() {
  std::mt19937 random(static_cast<unsigned>(getpid()) ^ static_cast<unsigned>(time(nullptr)));
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = 20000 + static_cast<int>(random() % 30000) * 2;
    if (addressFree("127.0.0.1", port) && addressFree("127.0.0.1", port + 1)) return port;
  }
  return -1;
}

}  // namespace

SlurmCluster::~SlurmCluster() { stop(); }

std::vector<std::string> SlurmCluster::command(const std::vector<std::string>& argv) const {
  // SLURM_JOB_ID and friends of an enclosing job would send the client there.
  std::vector<std::string> full = {"/usr/bin/env", "-u", "SLURM_JOB_ID", "-u", "SLURM_JOBID", "SLURM_CONF=" + conf_.string()};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

ProcessResult SlurmCluster::run(const std::vector<std::string>& argv, std::chrono::seconds timeout) const {
  return runProgram(command(argv), std::nullopt, timeout);
}

bool SlurmCluster::start(const fs::path& dir, const std::string& plugstack_line) {
  dir_ = dir;
  conf_ = dir / "slurm.conf";
  for (const char* sub : {"state", "spool", "log", "munge"}) fs::create_directories(dir / sub);
  // munged wants its key private and its socket's directory reachable.
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  {
    std::ofstream key(dir / "munge" / "munge.key", std::ios::binary);
    std::random_device random;
    for (int i = 0; i < 1024; ++i) key.put(static_cast<char>(random()));
  }
  chmod((dir / "munge" / "munge.key").c_str(), 0400);
  chmod((dir / "munge").c_str(), 0700);
  const fs::path munge_socket = dir / "munge.sock";

  munged_ = std::make_unique<BackgroundProgram>();
  if (!munged_->start({"/usr/sbin/munged", "--foreground", "--force", "--socket=" + munge_socket.string(),
                       "--key-file=" + (dir / "munge" / "munge.key").string(),
                       "--log-file=" + (dir / "log" / "munged.log").string(),
                       "--pid-file=" + (dir / "munge" / "munged.pid").string(),
                       "--seed-file=" + (dir / "munge" / "munged.seed").string()},
                      dir / "log" / "munged.out", dir / "log" / "munged.err")) {
    error_ = "cannot start munged";
    return false;
  }
  if (!waitFor([&] { return fs::exists(munge_socket); }, 20s)) {
    error_ = "munged made no socket in 20 s: " + munged_->err();
    return false;
  }

  const int port = freePortPair();
  if (port < 0) {
    error_ = "no free ports for slurmctld and slurmd";
    return false;
  }
  const std::string host = hostName();
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  std::ofstream conf(conf_);
  conf << "ClusterName=nktest\n"
       << "SlurmctldHost=" << host << "(127.0.0.1)\n"
       << "SlurmctldPort=" << port << "\nSlurmdPort=" << port + 1 << "\n"
       << "SlurmUser=root\nSlurmdUser=root\n"
       << "AuthType=auth/munge\nCredType=cred/munge\n"
       << "AuthInfo=socket=" << munge_socket.string() << "\n"
       << "StateSaveLocation=" << (dir / "state").string() << "\n"
       << "SlurmdSpoolDir=" << (dir / "spool").string() << "\n"
       << "SlurmctldPidFile=" << (dir / "slurmctld.pid").string() << "\n"
       << "SlurmdPidFile=" << (dir / "slurmd.pid").string() << "\n"
       << "SlurmctldLogFile=" << (dir / "log" / "slurmctld.log").string() << "\n"
       << "SlurmdLogFile=" << (dir / "log" / "slurmd.log").string() << "\n"
       << "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\nSwitchType=switch/none\nMpiDefault=none\n"
       << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
       << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
       << "JobCompType=jobcomp/none\nReturnToService=2\nKillWait=2\nMinJobAge=600\n"
       << "PlugStackConfig=" << (dir / "plugstack.conf").string() << "\n"
       << "SlurmctldDebug=info\nSlurmdDebug=info\n"
       << "NodeName=" << host << " NodeAddr=127.0.0.1 CPUs=" << cpus << " State=UNKNOWN\n"
       << "PartitionName=debug Nodes=" << host << " Default=YES MaxTime=INFINITE State=UP\n";
  conf.close();
  std::ofstream(dir / "plugstack.conf") << plugstack_line << "\n";

  slurmctld_ = std::make_unique<BackgroundProgram>();
  if (!slurmctld_->start(command({"/usr/sbin/slurmctld", "-D", "-i", "-f", conf_.string()}),
                         dir / "log" / "slurmctld.out", dir / "log" / "slurmctld.err")) {
    error_ = "cannot start slurmctld";
    return false;
  }
  slurmd_ = std::make_unique<BackgroundProgram>();
  if (!slurmd_->start(command({"/usr/sbin/slurmd", "-D", "-f", conf_.string()}), dir / "log" / "slurmd.out",
                      dir / "log" / "slurmd.err")) {
    error_ = "cannot start slurmd";
    return false;
  }
  const bool idle = waitFor(
      [&] {
        ProcessResult state = run({"sinfo", "-h", "-o", "%T"}, 20s);
        return state.exit_code == 0 && state.out.find("idle") != std::string::npos;
      },
      60s);
  if (!idle) {
    error_ = "the node is not idle after 60 s\n" + logs();
    return false;
  }
  return true;
}

std::string SlurmCluster::logs() const {
  std::string text;
  for (const char* name : {"slurmctld.log", "slurmd.log", "slurmctld.err", "slurmd.err", "munged.err"}) {
    std::string log = readFile(dir_ / "log" / name);
    if (log.size() > 4000) log = "..." + log.substr(log.size() - 4000);
    text += std::string("--- ") + name + "\n" + log;
  }
  return text;
}

std::string SlurmCluster::jobIdByName(const std::string& name) const {
  ProcessResult listed = run({"squeue", "-h", "-o", "%i", "-n", name}, 20s);
  if (listed.exit_code != 0) return "";
  std::string id = listed.out.substr(0, listed.out.find('\n'));
  return id;
}

std::string SlurmCluster::jobField(const std::string& job_id, const std::string& field) const {
  ProcessResult shown = run({"scontrol", "show", "job", job_id, "-o"}, 20s);
  if (shown.exit_code != 0) return "";
  const std::string key = " " + field + "=";
  size_t at = shown.out.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  size_t end = shown.out.find_first_of(" \n", at);
  return shown.out.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// Steps and tasks of this cluster's jobs carry its SLURM_CONF: slurmstepd
// gets slurmd's environment, the tasks srun's.
void SlurmCluster::killLeftovers() const {
  if (conf_.empty()) return;
  const std::string marker = "SLURM_CONF=" + conf_.string();
  for (int round = 0; round < 3; ++round) {
    std::vector<pid_t> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      pid_t pid = std::stoi(name);
      if (pid == getpid()) continue;
      std::string environ = readFile(entry.path() / "environ");
      for (size_t start = 0; start < environ.size();) {
        size_t end = environ.find('\0', start);
        if (end == std::string::npos) end = environ.size();
        if (environ.compare(start, end - start, marker) == 0) {
          found.push_back(pid);
          break;
        }
        start = end + 1;
      }
    }
    if (found.empty()) return;
    for (pid_t pid : found) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(200ms);
  }
}

void SlurmCluster::stop() {
  if (slurmctld_ && slurmd_) run({"scancel", "--full", "-u", "root"}, 20s);
  for (auto* daemon : {&slurmd_, &slurmctld_}) {
    if (!*daemon) continue;
    if ((*daemon)->pid() > 0) ::kill((*daemon)->pid(), SIGTERM);
    if ((*daemon)->wait(15s) < 0) (*daemon)->kill();
    daemon->reset();
  }
  killLeftovers();
  if (munged_) {
    if (munged_->pid() > 0) ::kill(munged_->pid(), SIGTERM);
    if (munged_->wait(10s) < 0) munged_->kill();
    munged_.reset();
  }
}

}  // namespace nk::test
