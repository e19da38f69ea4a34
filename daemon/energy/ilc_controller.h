#pragma once

#include <array>
#include <cstdint>

namespace nk {

struct IlcParams {
  double k1 = 8.0;
  double k2 = 1.0;
  double delta_f_khz = 100000.0;
  double error_band_pct = 2.0;
  uint32_t error_window = 1;   // 0 = since reset()
  // Eq. 8's gain is multiplied by this while over the budget (not in
  // Shafik et al.): a budget is a limit, so excess is taken back faster
  // than slack is given out.
  double over_budget_gain = 1.0;
};

// Iterative learning control of one thread's core frequency (Shafik et al., eq. 7 to 10).
class IlcController {
 public:
  static constexpr uint32_t kMaxWindow = 16;

  explicit IlcController(const IlcParams& params = {});

  void start(double f_khz);
  bool started() const { return started_; }
  void resetError();

  // One dT_DVFS step: power_w was observed over the interval that just
  // ended under budget_w; returns f_t in kHz, clamped to [fmin, fmax].
  double step(double power_w, double budget_w, double predicted_cycles, double interval_s,
              double fmin_khz, double fmax_khz);

  double frequencyKhz() const { return f_khz_; }
  double lastErrorPct() const { return last_error_pct_; }
  double lastK() const { return last_k_; }
  bool lastUsedEq7() const { return last_eq7_; }

 private:
  IlcParams params_;
  bool started_ = false;
  double f_khz_ = 0.0;
  std::array<double, kMaxWindow> diffs_{};  // P_i - P_budget, ring
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  double total_diff_ = 0.0;                 // for error_window == 0
  double last_error_pct_ = 0.0;
  double last_k_ = 0.0;
  bool last_eq7_ = false;
};

}  // namespace nk
