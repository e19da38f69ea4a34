#include "cli/debug_console.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace v1 = nodekeeper::v1;

namespace nk::cli {

namespace {

using Json = nlohmann::ordered_json;
constexpr auto kCallTimeout = std::chrono::seconds(10);
constexpr auto kPollInterval = std::chrono::milliseconds(20);

// A list's total: a daemon that predates the totals sends none (0), and
// then the list is all there is.
uint64_t listedTotal(uint64_t total, int listed) { return std::max<uint64_t>(total, static_cast<uint64_t>(listed)); }

}  // namespace

Json DebugConsole::statusJson(const v1::DebugStatus& s) {
  Json out;
  out["session"] = s.session_id();
  out["live"] = s.live();
  out["held"] = s.held();
  out["steps_left"] = s.steps_left();
  out["parked_workers"] = s.parked_workers();
  out["not_queued"] = s.not_queued();
  out["queued"] = s.queued();
  out["running"] = s.running();
  out["finished"] = s.finished();
  Json functions = Json::array();
  for (const auto& f : s.functions())
    functions.push_back({{"function", f.function()},
                         {"not_queued", f.not_queued()},
                         {"queued", f.queued()},
                         {"running", f.running()},
                         {"finished", f.finished()}});
  out["functions"] = functions;
  out["ready"] = Json(std::vector<uint64_t>(s.ready().begin(), s.ready().end()));
  out["ready_total"] = listedTotal(s.ready_total(), s.ready_size());
  out["blocked"] = Json(std::vector<uint64_t>(s.blocked().begin(), s.blocked().end()));
  out["blocked_total"] = listedTotal(s.blocked_total(), s.blocked_size());
  out["blocked_functions"] = Json(std::vector<std::string>(s.blocked_functions().begin(), s.blocked_functions().end()));
  out["frontends"] = s.frontends();
  out["stall"] = s.stall();
  return out;
}

DebugConsole::DebugConsole(DebugClient& client, std::ostream& out, std::ostream& err, bool json, GdbRunner gdb)
    : client_(client), out_(out), err_(err), json_(json), gdb_(std::move(gdb)) {}

std::string DebugConsole::statusText(const v1::DebugStatus& s) {
  std::ostringstream out;
  out << "session " << s.session_id() << ": " << (s.live() ? "live" : "ended") << ", "
      << (s.held() ? "in break" : "running freely");
  if (s.steps_left()) out << " (" << s.steps_left() << " steps left)";
  out << ", " << s.parked_workers() << " worker(s) parked, " << s.frontends() << " frontend(s)\n";
  if (!s.stall().empty()) out << "stalled: " << s.stall() << "\n";
  out << "tasks: not_queued " << s.not_queued() << ", queued " << s.queued() << ", running " << s.running()
      << ", finished " << s.finished() << "\n";
  if (s.functions_size() > 0) {
    size_t width = 8;
    for (const auto& f : s.functions()) width = std::max(width, f.function().size());
    out << "  " << std::string("function") << std::string(width - 8 + 2, ' ') << "not_queued  queued  running  finished\n";
    for (const auto& f : s.functions()) {
      std::string counts[4] = {std::to_string(f.not_queued()), std::to_string(f.queued()), std::to_string(f.running()),
                               std::to_string(f.finished())};
      out << "  " << f.function() << std::string(width - f.function().size() + 2, ' ');
      out << std::string(10 - std::min<size_t>(10, counts[0].size()), ' ') << counts[0];
      out << std::string(8 - std::min<size_t>(8, counts[1].size()), ' ') << counts[1];
      out << std::string(9 - std::min<size_t>(9, counts[2].size()), ' ') << counts[2];
      out << std::string(10 - std::min<size_t>(10, counts[3].size()), ' ') << counts[3] << "\n";
    }
  }
  auto list = [&](const char* label, const auto& items, uint64_t total) {
    if (items.empty()) return;
    out << label << ":";
    for (const auto& item : items) out << " " << item;
    const uint64_t listed = static_cast<uint64_t>(items.size());
    if (total > listed) out << " \u2026 and " << total - listed << " more";
    out << "\n";
  };
  list("ready", s.ready(), s.ready_total());
  list("blocked", s.blocked(), s.blocked_total());
  list("blocked functions", s.blocked_functions(), 0);
  return out.str();
}

void DebugConsole::printOutcome(const std::string& command, bool ok, const std::string& message,
                                const v1::DebugUpdate* update) {
  if (json_) {
    Json line;
    line["command"] = command;
    line["ok"] = ok;
    line[ok ? "message" : "error"] = message;
    if (update && update->has_ack() && update->ack().latency_ns() > 0)
      line["latency_ms"] = static_cast<double>(update->ack().latency_ns()) / 1e6;
    if (update && update->has_status()) line["status"] = statusJson(update->status());
    out_ << line.dump() << "\n" << std::flush;
    return;
  }
  (ok ? out_ : err_) << (ok ? "" : "error: ") << message << "\n";
  if (ok && update && update->has_status() && command == "status") out_ << statusText(update->status());
  out_ << std::flush;
}

Result<v1::DebugStatus> DebugConsole::poll() {
  v1::DebugCommand command;
  command.mutable_status();
  auto reply = client_.call(command, kCallTimeout);
  if (!reply) return reply.error();
  return reply->status();
}

// The console's own waits poll the daemon's status: a few ms late at most,
// and the same view any other frontend gets.
bool DebugConsole::waitFor(const DebugLine& line, std::string* message) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(line.seconds);
  bool finished_wait = line.kind == DebugLine::Kind::kWaitFinished;
  const char* what = finished_wait ? "finished" : line.kind == DebugLine::Kind::kWaitParked ? "parked" : "tasks";
  while (true) {
    auto status = poll();
    if (!status) {
      *message = status.error().message;
      return false;
    }
    uint64_t value = finished_wait ? status->finished()
                     : line.kind == DebugLine::Kind::kWaitParked
                         ? status->parked_workers()
                         : status->not_queued() + status->queued() + status->running() + status->finished();
    if (value >= line.count) {
      *message = std::to_string(value) + " " + what;
      return true;
    }
    if (!status->live()) {
      *message = std::string("the program ended with ") + std::to_string(value) + " " + what;
      return false;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      *message = "timed out with " + std::to_string(value) + " " + what + " (waited for " + std::to_string(line.count) + ")";
      return false;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

bool DebugConsole::runLine(const std::string& text, bool* quit) {
  auto parsed = DebugCommandParser::parse(text);
  if (!parsed) {
    printOutcome(text, false, parsed.error().message, nullptr);
    return false;
  }
  const DebugLine& line = *parsed;
  switch (line.kind) {
    case DebugLine::Kind::kEmpty: return true;
    case DebugLine::Kind::kQuit: *quit = true; return true;
    case DebugLine::Kind::kHelp:
      if (json_)
        printOutcome(line.text, true, DebugCommandParser::helpText(), nullptr);
      else
        out_ << DebugCommandParser::helpText() << std::flush;
      return true;
    case DebugLine::Kind::kWaitSeconds:
      std::this_thread::sleep_for(std::chrono::duration<double>(line.seconds));
      printOutcome(line.text, true, "waited", nullptr);
      return true;
    case DebugLine::Kind::kWaitFinished:
    case DebugLine::Kind::kWaitParked:
    case DebugLine::Kind::kWaitTasks: {
      std::string message;
      bool ok = waitFor(line, &message);
      auto status = client_.lastStatus();
      v1::DebugUpdate update;
      if (status) *update.mutable_status() = *status;
      printOutcome(line.text, ok, message, status ? &update : nullptr);
      return ok;
    }
    case DebugLine::Kind::kGdb: {
      if (!gdb_) {
        printOutcome(line.text, false, "gdb: not available here", nullptr);
        return false;
      }
      auto outcome = gdb_(line.function);
      printOutcome(line.text, outcome.ok(), outcome ? *outcome : outcome.error().message, nullptr);
      return outcome.ok();
    }
    case DebugLine::Kind::kRemote: {
      auto reply = client_.call(line.remote, kCallTimeout);
      if (!reply) {
        printOutcome(line.text, false, reply.error().message, nullptr);
        return false;
      }
      printOutcome(line.text, reply->ack().ok(), reply->ack().message(), &*reply);
      return reply->ack().ok();
    }
  }
  return false;
}

int DebugConsole::runLines(const LineSource& lines, const std::function<bool(const std::string&, bool*)>& run_line) {
  bool all_ok = true, quit = false;
  while (!quit) {
    std::optional<std::string> line = lines();
    if (!line) break;
    all_ok = run_line(*line, &quit) && all_ok;
  }
  return all_ok ? 0 : 1;
}

int DebugConsole::run(const LineSource& lines) {
  return runLines(lines, [this](const std::string& line, bool* quit) { return runLine(line, quit); });
}

}  // namespace nk::cli
