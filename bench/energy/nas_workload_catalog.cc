#include "nas_workload_catalog.h"

#include <algorithm>
#include <string>
#include <vector>

namespace nk::sim {

// How the numbers were chosen. These are models, not measurements of NPB
// on this machine (there is none to measure on: the node is emulated).
//
// * Iteration counts (`repeat`) are NPB 3.3's class B/C parameters
//   (npbparams.h as setparams writes it; NAS-95-020, NAS-99-011):
//   BT 200 time steps, CG 75 iterations, FT 20, IS 10, LU 250, MG 20,
//   SP 400, UA 200; EP and DC make one pass.
// * Runtimes at 12 threads and 2.6 GHz (`seconds12`) follow Shafik et al.'s
//   Fig. 2(a): bars between a few and ~400 s, bt.C and sp.C the longest,
//   mg and is the shortest, class C about 4x class B (grid 162^3 against
//   102^3 for BT/SP/LU, 4x the keys for IS, 2x the rows for CG).
// * Memory-boundness m is the share of a phase's time that does not shrink
//   with frequency. The ranking is the usual one from DVFS studies of NPB
//   (Freeh et al., IEEE TPDS 18(6), 2007: EP slows in proportion to the
//   clock, CG/MG/IS/FT hardly; BT/SP/LU in between): sparse mat-vec (CG),
//   stencils on large grids (MG), random-access ranking (IS) and FFT
//   transposes (FT) high; ADI line solves (BT, SP) and SSOR (LU) medium;
//   EP's random numbers and Gaussian pairs nearly none. Class C adds 0.05
//   to memory-heavy phases: larger working sets, fewer cache hits.
// * Parallel fraction p: NPB-OMP parallelises every main loop, so p is
//   close to 1; the serial remainder is the setup and reductions (CG's
//   makea, MG's zran3, IS's key generation), and LU's pipelined wavefront
//   loses more to synchronisation (modelled as serial time).
// * Bandwidth saturation S: two sockets with 4 DDR3-1333 channels each
//   (ark 64593) saturate at around 3 streaming threads per socket; the
//   stencil and sparse phases stop scaling at about 6-8 threads in all.
// * DC's io: it writes and re-reads its views (ADC) through the file
//   system; about half its time is in the kernel.
namespace {

// Builds a model whose runtime at 12 threads and f_ref is seconds12.
WorkloadModel make(std::string name, int repeat, double seconds12, std::vector<WorkloadPhase> phases,
                   std::vector<WorkloadPhase> prologue = {}) {
  WorkloadModel model{std::move(name), std::move(phases), repeat, std::move(prologue)};
  double unscaled = NasWorkloadCatalog::closedFormSeconds(model, 12, 1.0);
  double scale = seconds12 / unscaled;
  for (WorkloadPhase& ph : model.phases) ph.work_core_s *= scale;
  for (WorkloadPhase& ph : model.prologue) ph.work_core_s *= scale;
  return model;
}

// m for class C: larger working sets than class B.
double c(double m) { return m >= 0.3 ? std::min(0.95, m + 0.05) : m; }

std::vector<WorkloadModel> build() {
  std::vector<WorkloadModel> all;
  for (char cls : {'B', 'C'}) {
    bool C = cls == 'C';
    auto m = [&](double b) { return C ? c(b) : b; };
    std::string s(1, '.');
    s += cls;
    // phase: name, weight (per iteration), p, m, S, io
    all.push_back(make("bt" + s, 200, C ? 230 : 55,
                       {{"compute_rhs", 0.30, 0.995, m(0.30), 0},
                        {"xyz_solve", 0.65, 0.998, m(0.20), 0},
                        {"add", 0.05, 0.99, m(0.60), 8}}));
    all.push_back(make("cg" + s, 75, C ? 50 : 18,
                       {{"conj_grad", 0.97, 0.995, m(0.75), 6}, {"norm", 0.03, 0.6, m(0.3), 0}},
                       {{"makea", 2.2, 0.6, 0.3, 0}}));
    if (!C)
      all.push_back(make("dc.B", 1, 110,
                         {{"generate", 0.3, 0.8, 0.3, 0, 0.5}, {"build_views", 0.7, 0.95, 0.5, 8, 0.4}}));
    all.push_back(make("ep" + s, 1, C ? 36 : 9, {{"gaussian_pairs", 1.0, 0.9995, 0.02, 0}}));
    all.push_back(make("ft" + s, 20, C ? 50 : 12,
                       {{"evolve", 0.2, 0.99, m(0.45), 8},
                        {"fft", 0.75, 0.99, m(0.55), 6},
                        {"checksum", 0.05, 0.3, 0.2, 0}},
                       {{"init", 2.0, 0.95, m(0.4), 8}}));
    all.push_back(make("is" + s, 10, C ? 6 : 1.5, {{"rank", 1.0, 0.98, m(0.80), 4}},
                       {{"create_seq", 3.3, 0.99, 0.15, 0}}));
    all.push_back(make("lu" + s, 250, C ? 170 : 40,
                       {{"rhs", 0.35, 0.995, m(0.40), 0},
                        {"blts_buts", 0.55, 0.95, m(0.30), 0},
                        {"l2norm_update", 0.10, 0.99, m(0.60), 8}}));
    all.push_back(make("mg" + s, 20, C ? 30 : 3.5,
                       {{"resid", 0.45, 0.99, m(0.70), 6},
                        {"psinv", 0.25, 0.99, m(0.65), 6},
                        {"rprj3_interp", 0.30, 0.98, m(0.70), 6}},
                       {{"zran3", 1.0, 0.7, 0.3, 0}}));
    all.push_back(make("sp" + s, 400, C ? 260 : 60,
                       {{"compute_rhs", 0.35, 0.995, m(0.45), 0},
                        {"xyz_solve", 0.50, 0.995, m(0.35), 0},
                        {"txinvr_add", 0.15, 0.99, m(0.65), 8}}));
    all.push_back(make("ua" + s, 200, C ? 180 : 45,
                       {{"transfer", 0.35, 0.92, m(0.55), 0},
                        {"diffusion", 0.50, 0.97, m(0.50), 8},
                        {"adapt", 0.15, 0.7, 0.3, 0}}));
  }
  // Shafik et al.'s Fig. 2 order: by benchmark, then class.
  std::stable_sort(all.begin(), all.end(), [](const WorkloadModel& a, const WorkloadModel& b) { return a.name < b.name; });
  return all;
}

double phaseSeconds(const WorkloadPhase& ph, uint32_t threads, double f_ratio) {
  double d = std::max<uint32_t>(threads, 1);
  double s = ph.bandwidth_threads ? std::min<double>(d, ph.bandwidth_threads) : d;
  double compute = std::max(0.0, 1.0 - ph.memory_boundness - ph.io_fraction);
  double serial = (1.0 - ph.parallel_fraction) * (compute / f_ratio + ph.memory_boundness + ph.io_fraction);
  double parallel = ph.parallel_fraction * (compute / f_ratio / d + ph.memory_boundness / s + ph.io_fraction / d);
  return ph.work_core_s * (serial + parallel);
}

}  // namespace

double NasWorkloadCatalog::closedFormSeconds(const WorkloadModel& model, uint32_t threads, double f_ratio) {
  double t = 0.0;
  for (const WorkloadPhase& ph : model.prologue) t += phaseSeconds(ph, threads, f_ratio);
  double round = 0.0;
  for (const WorkloadPhase& ph : model.phases) round += phaseSeconds(ph, threads, f_ratio);
  return t + round * model.repeat;
}

std::span<const WorkloadModel> NasWorkloadCatalog::all() {
  static const std::vector<WorkloadModel> models = build();
  return models;
}

const WorkloadModel* NasWorkloadCatalog::find(std::string_view name) {
  for (const WorkloadModel& m : all())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace nk::sim
