#include "over_budget_watch.h"

#include <cstdio>

namespace nk {

namespace {

std::string watts(double w) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f W", w);
  return text;
}

}  // namespace

std::string OverBudgetWatch::observe(const Step& step) {
  // The budget the app is held to: its own, or less after the node cap.
  double held = step.effective_budget_w > 0 ? step.effective_budget_w : step.budget_w;
  if (!(held > 0) || !(step.power_w > held * (1.0 + kTolerance))) {
    over_ = 0;
    return "";
  }
  if (++over_ < intervals_) return "";
  std::string causes;
  auto add = [&](const std::string& cause) { causes += (causes.empty() ? "" : "; ") + cause; };
  if (step.threads > 0 && step.threads <= step.floor_threads && step.at_lowest_clock)
    add("floor reached (D " + std::to_string(step.threads) + " at the lowest clock)");
  if (step.budget_w > 0 && step.effective_budget_w > 0 && step.effective_budget_w < step.budget_w * (1.0 - kTolerance))
    add("node cap (held to " + watts(step.effective_budget_w) + " of its " + watts(step.budget_w) + ")");
  if (step.foreign_load_cores >= kForeignLoadCores) {
    char text[96];
    std::snprintf(text, sizeof text, "foreign load on its cores (%.1f cores' worth)", step.foreign_load_cores);
    add(text);
  }
  if (causes.empty()) causes = "no cause found (the policy is still bringing it down)";
  return "over budget for " + std::to_string(over_) + " intervals: " + causes;
}

}  // namespace nk
