// The last minutes of telemetry as column arrays (what uPlot draws):
// time in seconds, node power, each package's power, the app's budget,
// the hottest core and the mean frequency and utilisation.
export const HISTORY_SECONDS = 300;

export class TelemetryHistory {
  constructor() {
    this.columns = { t: [], node_w: [], package_w: [], budget_w: [], cap_w: [], temp_c: [], ghz: [], util: [] };
    this.budget = null;
  }

  setBudget(watts) { this.budget = watts; }

  add(sample) {
    const c = this.columns;
    const packages = sample.packages || [], cores = sample.cores || [];
    const sum = (list, f) => list.reduce((s, x) => s + (Number.isFinite(f(x)) ? f(x) : 0), 0);
    const finite = (list, f) => list.map(f).filter(Number.isFinite);
    const temps = finite(cores, (x) => x.temperature_c);
    const khz = finite(cores, (x) => x.cur_khz);
    const util = finite(cores, (x) => x.utilisation);
    const caps = finite(packages, (x) => x.power_limit_w);
    c.t.push(sample.monotonic_ns / 1e9);
    c.node_w.push(Number.isFinite(sample.node_power_w) ? sample.node_power_w : sum(packages, (p) => p.power_w));
    c.package_w.push(sum(packages, (p) => p.power_w));
    c.budget_w.push(this.budget);
    c.cap_w.push(caps.length ? caps.reduce((a, b) => a + b, 0) : null);
    c.temp_c.push(temps.length ? Math.max(...temps) : null);
    c.ghz.push(khz.length ? khz.reduce((a, b) => a + b, 0) / khz.length / 1e6 : null);
    c.util.push(util.length ? (100 * util.reduce((a, b) => a + b, 0)) / util.length : null);
    const oldest = c.t[c.t.length - 1] - HISTORY_SECONDS;
    let drop = 0;
    while (drop < c.t.length && c.t[drop] < oldest) drop++;
    if (drop) for (const key of Object.keys(c)) c[key].splice(0, drop);
  }

  get length() { return this.columns.t.length; }
}
