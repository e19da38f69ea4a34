/* nodekeeper's SPANK plugin: srun/sbatch --nk-budget, --nk-policy,
 * --nk-tasks, --nk-debug; tells the node's daemon of the job, its tasks and
 * its end by running the nodekeeper CLI as root from slurmstepd, sets what
 * libnodekeeper needs in each task's environment, and writes the job's
 * energy to its AdminComment. docs/slurm.md says what it does when.
 *
 * Nothing here may fail a job: every call to the daemon has a deadline, and
 * a daemon that is absent or slow costs the job one line on its stderr. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "spank_values.h"

SPANK_PLUGIN(nodekeeper, 1);

/* srun sets it in its own environment (which its tasks get) when it makes
 * its own allocation: then the end of its step is the end of the job. */
#define OWN_ALLOCATION_VAR "NODEKEEPER_SLURM_OWN_ALLOCATION"
#define MAX_NODES 65536
#define MAX_ARGS 32

static struct {
  char cli[PATH_MAX];
  char socket[PATH_MAX];
  char tool[PATH_MAX];
  unsigned peer_port;
  int timeout_s;
  int always;
} conf = {"/usr/bin/nodekeeper", "/run/nodekeeper/nodekeeperd.sock", "", 0, 2, 0};

static struct {
  uint64_t budget_mw;
  char policy[65];
  char tasks[16];
  int debug;
  int any; /* some --nk-* option was given */
} opts;

static struct {
  int active;      /* remote context, a real step of a job the daemon knows */
  int daemon_down; /* told once; nothing more is tried */
  uint32_t job_id;
  uint32_t step_id;
  char job[16];
  int first_signal;    /* of the first task killed by a signal */
  int first_exit_code; /* of the first task that exited non-zero */
  int tasks_ended;
  int finished; /* the end was told (or is not this step's to tell) */
  char down_message[640]; /* why the daemon counts as down, for the job's stderr */
} state;

/* ------------------------------------------------------------------ */
/* Options                                                            */

static int budget_option(int val, const char *optarg, int remote) {
  (void)val;
  char why[128];
  if (nk_spank_parse_budget(optarg, &opts.budget_mw, why, sizeof why) != 0) {
    if (!remote) slurm_error("nodekeeper: --nk-budget=%s %s", optarg ? optarg : "", why);
    return -1;
  }
  opts.any = 1;
  return 0;
}

static int policy_option(int val, const char *optarg, int remote) {
  (void)val;
  if (!nk_spank_valid_policy(optarg)) {
    if (!remote)
      slurm_error("nodekeeper: --nk-policy=%s is not a policy name (1 to 64 letters, digits, '_', '.', '-'; "
                  "see 'nodekeeper policy get')",
                  optarg ? optarg : "");
    return -1;
  }
  snprintf(opts.policy, sizeof opts.policy, "%s", optarg);
  opts.any = 1;
  return 0;
}

static int tasks_option(int val, const char *optarg, int remote) {
  (void)val;
  if (!nk_spank_valid_tasks(optarg)) {
    if (!remote) slurm_error("nodekeeper: --nk-tasks=%s is neither lossless nor lossy", optarg ? optarg : "");
    return -1;
  }
  snprintf(opts.tasks, sizeof opts.tasks, "%s", optarg);
  opts.any = 1;
  return 0;
}

static int debug_option(int val, const char *optarg, int remote) {
  (void)val;
  (void)optarg;
  (void)remote;
  opts.debug = 1;
  opts.any = 1;
  return 0;
}

static struct spank_option options[] = {
    {"nk-budget", "WATTS", "nodekeeper: the job's power budget per node, e.g. 40W", 1, 0, budget_option},
    {"nk-policy", "NAME", "nodekeeper: the energy policy of the job's programs", 1, 0, policy_option},
    {"nk-tasks", "MODE", "nodekeeper: record the programs' OpenMP tasks, lossless or lossy", 1, 0, tasks_option},
    {"nk-debug", NULL, "nodekeeper: hold the programs at start for a debugger frontend", 0, 0, debug_option},
    SPANK_OPTIONS_TABLE_END};

/* ------------------------------------------------------------------ */
/* Plugin arguments (plugstack.conf)                                  */

static void copy_value(char *to, size_t len, const char *arg, const char *key) {
  if (strlen(arg) - strlen(key) >= len) {
    slurm_error("nodekeeper: plugstack.conf argument %s is too long; ignored", key);
    return;
  }
  snprintf(to, len, "%s", arg + strlen(key));
}

static void parse_arguments(int ac, char **av) {
  for (int i = 0; i < ac; ++i) {
    const char *arg = av[i];
    if (strncmp(arg, "cli=", 4) == 0) copy_value(conf.cli, sizeof conf.cli, arg, "cli=");
    else if (strncmp(arg, "socket=", 7) == 0) copy_value(conf.socket, sizeof conf.socket, arg, "socket=");
    else if (strncmp(arg, "tool=", 5) == 0) copy_value(conf.tool, sizeof conf.tool, arg, "tool=");
    else if (strncmp(arg, "peer_port=", 10) == 0) {
      char *end = NULL;
      unsigned long port = strtoul(arg + 10, &end, 10);
      if (end == arg + 10 || *end || port == 0 || port > 65535)
        slurm_error("nodekeeper: plugstack.conf: %s is not a TCP port; ignored", arg);
      else conf.peer_port = (unsigned)port;
    } else if (strncmp(arg, "timeout=", 8) == 0) {
      char *end = NULL;
      long seconds = strtol(arg + 8, &end, 10);
      if (end == arg + 8 || *end || seconds < 1 || seconds > 2)
        slurm_error("nodekeeper: plugstack.conf: %s must be 1 or 2 (seconds); ignored", arg);
      else conf.timeout_s = (int)seconds;
    } else if (strcmp(arg, "always") == 0) conf.always = 1;
    else slurm_error("nodekeeper: plugstack.conf: unknown argument '%s' ignored", arg);
  }
}

/* ------------------------------------------------------------------ */
/* Running the CLI                                                    */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs conf.cli with `args` (after the global options), its stdout into
 * `out` and its stderr's first line into `err`. Returns its exit code, or
 * -1 when it could not run or took longer than the deadline (then it is
 * killed). The caller is slurmstepd's thread: no other thread reaps here. */
static int run_cli(const char *const *args, char *out, size_t out_len, char *err, size_t err_len) {
  char timeout[16];
  snprintf(timeout, sizeof timeout, "%d", conf.timeout_s);
  const char *argv[MAX_ARGS + 8];
  int n = 0;
  argv[n++] = conf.cli;
  argv[n++] = "--socket";
  argv[n++] = conf.socket;
  argv[n++] = "--timeout";
  argv[n++] = timeout;
  for (int i = 0; args[i] && n < MAX_ARGS + 6; ++i) argv[n++] = args[i];
  argv[n] = NULL;
  char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
  if (out_len) out[0] = '\0';
  if (err_len) err[0] = '\0';

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return -1;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
    snprintf(err, err_len, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execve(conf.cli, (char *const *)argv, envp);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);

  /* The CLI's own deadline is timeout_s; a second more for its start. */
  const double deadline = now_s() + conf.timeout_s + 1.0;
  size_t out_used = 0, err_used = 0;
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  int timed_out = 0;
  while (open_fds > 0) {
    int wait_ms = (int)((deadline - now_s()) * 1000);
    if (wait_ms <= 0) {
      timed_out = 1;
      break;
    }
    int ready = poll(fds, 2, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[512];
      ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      char *to = i == 0 ? out : err;
      size_t len = i == 0 ? out_len : err_len;
      size_t *used = i == 0 ? &out_used : &err_used;
      if (len > 0 && *used < len - 1) {
        size_t take = (size_t)got < len - 1 - *used ? (size_t)got : len - 1 - *used;
        memcpy(to + *used, chunk, take);
        *used += take;
        to[*used] = '\0';
      }
    }
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i].fd >= 0) close(fds[i].fd);
  int status = 0;
  if (timed_out) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    snprintf(err, err_len, "the daemon did not answer within %d s", conf.timeout_s);
    return -1;
  }
  /* Its pipes closed: it has exited or is about to; wait for it, bounded. */
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return -1;
    if (now_s() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      snprintf(err, err_len, "the daemon did not answer within %d s", conf.timeout_s);
      return -1;
    }
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
  }
  char *newline = strchr(err, '\n');
  if (newline) *newline = '\0';
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 127 && !err[0]) snprintf(err, err_len, "cannot run %.300s", conf.cli);
    return WEXITSTATUS(status);
  }
  snprintf(err, err_len, "%.300s ended by signal %d", conf.cli, WTERMSIG(status));
  return -1;
}

/* One call; on failure the daemon counts as down for the rest of the step
 * and the job gets one line on its stderr. */
static int tell_daemon(const char *what, const char *const *args, char *out, size_t out_len) {
  if (state.daemon_down) return -1;
  char err[512];
  int code = run_cli(args, out, out_len, err, sizeof err);
  if (code == 0) return 0;
  state.daemon_down = 1;
  snprintf(state.down_message, sizeof state.down_message, "nodekeeper: %s: %s; job %s runs without nodekeeper", what,
           err[0] ? err : "failed", state.job);
  /* slurmd's log; the job's stderr gets it from its first task (task_init). */
  slurm_error("%s", state.down_message);
  return -1;
}

/* ------------------------------------------------------------------ */
/* SPANK callbacks                                                    */

int slurm_spank_init(spank_t sp, int ac, char **av) {
  parse_arguments(ac, av);
  for (struct spank_option *o = options; o->name; ++o)
    if (spank_option_register(sp, o) != ESPANK_SUCCESS) slurm_error("nodekeeper: cannot register --%s", o->name);
  if (spank_context() == S_CTX_LOCAL) {
    /* srun outside an allocation makes its own: its step is the job. */
    if (getenv("SLURM_JOB_ID") == NULL) setenv(OWN_ALLOCATION_VAR, "1", 1);
    else unsetenv(OWN_ALLOCATION_VAR);
  }
  return 0;
}

/* Expands the job's node list ("node[01-04],gpu1") into "node01,...". */
static char *node_names(spank_t sp) {
  char *compressed = malloc(1 << 16);
  if (!compressed) return NULL;
  if (spank_getenv(sp, "SLURM_JOB_NODELIST", compressed, 1 << 16) != ESPANK_SUCCESS &&
      spank_getenv(sp, "SLURM_NODELIST", compressed, 1 << 16) != ESPANK_SUCCESS) {
    free(compressed);
    return NULL;
  }
  hostlist_t list = slurm_hostlist_create(compressed);
  free(compressed);
  if (!list) return NULL;
  size_t cap = 4096, used = 0;
  char *names = malloc(cap);
  int count = 0;
  char *host;
  while (names && (host = slurm_hostlist_shift(list)) != NULL) {
    size_t len = strlen(host);
    if (++count > MAX_NODES) {
      free(host);
      break;
    }
    if (used + len + 2 > cap) {
      char *bigger = realloc(names, cap * 2 + len);
      if (!bigger) {
        free(names);
        names = NULL;
        free(host);
        break;
      }
      names = bigger;
      cap = cap * 2 + len;
    }
    if (used) names[used++] = ',';
    memcpy(names + used, host, len);
    used += len;
    names[used] = '\0';
    free(host);
  }
  slurm_hostlist_destroy(list);
  return names;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av) {
  (void)ac;
  (void)av;
  if (spank_context() != S_CTX_REMOTE) return 0;
  uid_t uid;
  if (spank_get_item(sp, S_JOB_ID, &state.job_id) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_STEPID, &state.step_id) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
    return 0;
  /* The extern step holds no user task; nothing to tell. */
  if (state.step_id == SLURM_EXTERN_CONT) return 0;
  snprintf(state.job, sizeof state.job, "%u", state.job_id);

  char uid_text[16], budget[32], port[16];
  snprintf(uid_text, sizeof uid_text, "%u", (unsigned)uid);
  const char *args[MAX_ARGS];
  int n = 0;
  args[n++] = "job";
  args[n++] = "begin";
  args[n++] = "--job";
  args[n++] = state.job;
  args[n++] = "--uid";
  args[n++] = uid_text;
  char *nodes = node_names(sp);
  if (nodes && *nodes) {
    args[n++] = "--nodes";
    args[n++] = nodes;
  }
  if (conf.peer_port) {
    snprintf(port, sizeof port, "%u", conf.peer_port);
    args[n++] = "--peer-port";
    args[n++] = port;
  }
  if (opts.budget_mw) {
    snprintf(budget, sizeof budget, "%llumW", (unsigned long long)opts.budget_mw);
    args[n++] = "--budget";
    args[n++] = budget;
  }
  if (opts.policy[0]) {
    args[n++] = "--policy";
    args[n++] = opts.policy;
  }
  if (opts.tasks[0]) {
    args[n++] = "--tasks";
    args[n++] = opts.tasks;
  }
  if (opts.debug) args[n++] = "--debug";
  int argc = 0;
  char **argv = NULL;
  char program[256] = "";
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS && argc > 0 && argv && argv[0]) {
    const char *slash = strrchr(argv[0], '/');
    snprintf(program, sizeof program, "%s", slash ? slash + 1 : argv[0]);
  }
  if (program[0]) {
    args[n++] = "--program";
    args[n++] = program;
  }
  /* This is slurmstepd, whose children the step's tasks will be: one call
   * makes them all the job's (a `job attach` per task cost each task's start
   * a CLI run, about 60 ms). */
  char step_pid[16];
  snprintf(step_pid, sizeof step_pid, "%d", (int)getpid());
  args[n++] = "--step-pid";
  args[n++] = step_pid;
  args[n] = NULL;
  char out[1024];
  if (tell_daemon("telling the daemon of the job", args, out, sizeof out) == 0) state.active = 1;
  free(nodes);
  return 0;
}

/* In the task, as the user, before exec: what libnodekeeper reads. */
int slurm_spank_task_init(spank_t sp, int ac, char **av) {
  (void)ac;
  (void)av;
  if (state.daemon_down) {
    /* Before slurmstepd's own stdio is the job's: the task's stderr is. */
    uint32_t global_id = 1;
    if (state.down_message[0] && spank_get_item(sp, S_TASK_GLOBAL_ID, &global_id) == ESPANK_SUCCESS && global_id == 0)
      dprintf(2, "%s\n", state.down_message);
    return 0;
  }
  if (!state.active) return 0;
  if (!(opts.any || conf.always)) return 0;
  if (conf.tool[0]) {
    char existing[PATH_MAX * 2];
    if (spank_getenv(sp, "OMP_TOOL_LIBRARIES", existing, sizeof existing) == ESPANK_SUCCESS && existing[0]) {
      if (!strstr(existing, conf.tool)) {
        char both[PATH_MAX * 3 + 2];
        snprintf(both, sizeof both, "%s:%s", conf.tool, existing);
        spank_setenv(sp, "OMP_TOOL_LIBRARIES", both, 1);
      }
    } else {
      spank_setenv(sp, "OMP_TOOL_LIBRARIES", conf.tool, 1);
    }
  }
  spank_setenv(sp, "NODEKEEPER_SOCKET", conf.socket, 0);
  if (opts.tasks[0]) spank_setenv(sp, "NODEKEEPER_TASKS", opts.tasks, 1);
  if (opts.debug) {
    /* The break at start is the task stream's: without one the program
     * ran straight through and no frontend could attach. Lossless unless
     * the job asked otherwise, as `nodekeeper debug` does. */
    if (!opts.tasks[0]) spank_setenv(sp, "NODEKEEPER_TASKS", "lossless", 0);
    spank_setenv(sp, "NODEKEEPER_BREAK_AT_START", "1", 1);
  }
  return 0;
}

/* This job as slurmctld has it (its record is job_array[0]), or NULL; the
 * caller frees it with slurm_free_job_info_msg. */
static job_info_msg_t *load_this_job(void) {
  job_info_msg_t *info = NULL;
  if (slurm_load_job(&info, state.job_id, SHOW_ALL) != SLURM_SUCCESS || !info) return NULL;
  if (info->record_count == 0) {
    slurm_free_job_info_msg(info);
    return NULL;
  }
  return info;
}

/* scancel sets the job's state to CANCELLED at slurmctld before its tasks
 * get their signals: a task killed by SIGTERM, SIGKILL, SIGINT or SIGHUP
 * while the job is CANCELLED was cancelled, not crashed. */
static int job_was_cancelled(void) {
  job_info_msg_t *info = load_this_job();
  if (!info) return 0;
  int cancelled = (info->job_array[0].job_state & JOB_STATE_BASE) == JOB_CANCELLED;
  slurm_free_job_info_msg(info);
  return cancelled;
}

/* slurmctld refuses to change a job that has finished, so this runs while
 * the step's last task here is reaped and the job still runs; a cancelled
 * job has finished already and keeps its AdminComment as it was. */
static void write_admin_comment(spank_t sp, double energy_j) {
  char node[256] = "";
  if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !node[0]) {
    gethostname(node, sizeof node - 1);
    node[strcspn(node, ".")] = '\0';
  }
  job_info_msg_t *info = load_this_job();
  const char *existing = info && info->job_array[0].admin_comment ? info->job_array[0].admin_comment : "";
  char comment[1024];
  int fits = nk_spank_admin_comment(existing, node, energy_j, comment, sizeof comment);
  if (info) slurm_free_job_info_msg(info);
  if (fits != 0) {
    slurm_error("nodekeeper: job %s: its AdminComment is too long to add the energy to", state.job);
    return;
  }
  job_desc_msg_t update;
  slurm_init_job_desc_msg(&update);
  update.job_id = state.job_id;
  update.admin_comment = comment;
  if (slurm_update_job(&update) != SLURM_SUCCESS)
    slurm_info("nodekeeper: job %s: cannot set its AdminComment: %s", state.job, slurm_strerror(slurm_get_errno()));
}

/* The step's tasks here have all ended: if that ends the job, tell the
 * daemon how, and write the energy it reports to the job. */
static void finish(spank_t sp) {
  if (state.finished || !state.active || state.daemon_down) return;
  state.finished = 1;
  const int sig = state.first_signal;
  const int killed = sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP;
  const int cancelled = killed && job_was_cancelled();
  char own[8] = "";
  const int own_allocation =
      spank_getenv(sp, OWN_ALLOCATION_VAR, own, sizeof own) == ESPANK_SUCCESS && strcmp(own, "1") == 0;
  /* A step inside an allocation (salloc, sbatch) is not the job's end;
   * the batch step is, and the step of an srun that made its own. */
  if (!(cancelled || own_allocation || state.step_id == SLURM_BATCH_SCRIPT)) return;

  const char *end;
  char detail[128];
  const char *sig_name = sig && sigabbrev_np(sig) ? sigabbrev_np(sig) : "?";
  if (cancelled) {
    end = "cancelled";
    snprintf(detail, sizeof detail, "cancelled by scancel (SIG%s)", sig_name);
  } else if (sig) {
    end = "failed";
    snprintf(detail, sizeof detail, "a task was killed by SIG%s", sig_name);
  } else if (state.first_exit_code) {
    end = "failed";
    snprintf(detail, sizeof detail, "exit %d", state.first_exit_code);
  } else {
    end = "completed";
    snprintf(detail, sizeof detail, "exit 0");
  }
  const char *args[] = {"--json", "job", "end", "--job", state.job, "--end", end, "--detail", detail, NULL};
  char out[8192];
  if (tell_daemon("telling the daemon how the job ended", args, out, sizeof out) != 0) return;
  double energy_j = nk_spank_energy_from_json(out);
  if (energy_j >= 0 && !cancelled) write_admin_comment(sp, energy_j);
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av) {
  (void)ac;
  (void)av;
  if (!state.active) return 0;
  int status = 0;
  if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS) return 0;
  ++state.tasks_ended;
  if (WIFSIGNALED(status) && state.first_signal == 0) state.first_signal = WTERMSIG(status);
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && state.first_exit_code == 0)
    state.first_exit_code = WEXITSTATUS(status);
  uint32_t local_tasks = 0;
  if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) == ESPANK_SUCCESS &&
      state.tasks_ended >= (int)local_tasks)
    finish(sp);
  return 0;
}

/* How the job ended, as slurmctld has it while it completes (the epilog):
 * 0 with `end` and `detail` set, or -1 when it cannot say. */
static int job_end_from_slurmctld(const char **end, char *detail, size_t detail_len) {
  /* A NULL detail: the exit code's. */
  static const struct {
    uint32_t state;
    const char *end;
    const char *detail;
  } kEnds[] = {
      {JOB_COMPLETE, "completed", NULL},
      {JOB_FAILED, "failed", NULL},
      {JOB_TIMEOUT, "failed", "time limit reached"},
      {JOB_DEADLINE, "failed", "time limit reached"},
      {JOB_OOM, "failed", "out of memory"},
      {JOB_CANCELLED, "cancelled", "cancelled by scancel"},
      {JOB_PREEMPTED, "cancelled", "preempted"},
      {JOB_NODE_FAIL, "aborted", "a node failed"},
      {JOB_BOOT_FAIL, "aborted", "a node failed"},
  };
  job_info_msg_t *info = load_this_job();
  if (!info) return -1;
  const slurm_job_info_t *job = &info->job_array[0];
  int known = 0;
  for (size_t i = 0; i < sizeof kEnds / sizeof kEnds[0] && !known; ++i) {
    if ((job->job_state & JOB_STATE_BASE) != kEnds[i].state) continue;
    known = 1;
    *end = kEnds[i].end;
    const uint32_t code = job->exit_code;
    const int signal = WIFSIGNALED(code) ? WTERMSIG(code) : 0;
    if (kEnds[i].detail)
      snprintf(detail, detail_len, "%s", kEnds[i].detail);
    else if (signal)
      snprintf(detail, detail_len, "killed by SIG%s", sigabbrev_np(signal) ? sigabbrev_np(signal) : "?");
    else
      snprintf(detail, detail_len, "exit %d", WEXITSTATUS(code));
  }
  slurm_free_job_info_msg(info);
  return known ? 0 : -1;
}

/* slurmd's epilog on this node, as root, once the job's steps here are
 * over: the one callback that sees every job end, an salloc one too (its
 * steps end nothing: see finish). An end told already (the batch step, an
 * srun's own allocation, a cancellation) stays: the first to know tells
 * it. Never fails: a failing epilog would drain the node. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
  parse_arguments(ac, av);
  if (spank_get_item(sp, S_JOB_ID, &state.job_id) != ESPANK_SUCCESS) {
    const char *id = getenv("SLURM_JOB_ID");
    if (!id || !*id) return 0;
    state.job_id = (uint32_t)strtoul(id, NULL, 10);
  }
  snprintf(state.job, sizeof state.job, "%u", state.job_id);
  const char *end = "unknown";
  char detail[128] = "the allocation ended";
  (void)job_end_from_slurmctld(&end, detail, sizeof detail);
  const char *args[] = {"job", "end", "--job", state.job, "--end", end, "--detail", detail, NULL};
  char out[1024], err[512];
  /* A job that ran no step here is unknown to the daemon: nothing to tell.
   * Its AdminComment is not written here: slurmctld refuses changes to a
   * completing job ("Job has already finished"). */
  if (run_cli(args, out, sizeof out, err, sizeof err) != 0)
    slurm_info("nodekeeper: job %s: its end was not recorded: %s", state.job, err[0] ? err : "failed");
  return 0;
}

/* Tasks slurmstepd did not report one by one still end the job here. */
int slurm_spank_exit(spank_t sp, int ac, char **av) {
  (void)ac;
  (void)av;
  if (spank_context() == S_CTX_REMOTE) finish(sp);
  return 0;
}
