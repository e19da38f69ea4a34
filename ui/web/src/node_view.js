// The node beside the graph: per-core frequency, temperature and
// utilisation with the session's cores marked, package power against the
// cap and the app's budget, D, and uPlot plots of the last minutes.
import uPlot from 'uplot';
import { el, clear } from './dom.js';
import { TelemetryHistory } from './telemetry_history.js';

export class NodeView {
  constructor(root) {
    this.root = root;
    this.history = new TelemetryHistory();
    this.app = null;
    this.pid = null; // the selected session's program
    this.cores = root.querySelector('#cores');
    this.packages = root.querySelector('#packages');
    this.appLine = root.querySelector('#app-line');
    this.powerPlot = this.plot(root.querySelector('#power-plot'), 'W', [
      { label: 'node W', stroke: '#d9480f', width: 2 },
      { label: 'packages W', stroke: '#f59f00' },
      { label: 'app budget W', stroke: '#1971c2', dash: [6, 4] },
      { label: 'cap W', stroke: '#868e96', dash: [2, 3] },
    ]);
    this.corePlot = this.plot(root.querySelector('#core-plot'), '', [
      { label: 'hottest °C', stroke: '#c92a2a' },
      { label: 'mean GHz ×10', stroke: '#5f3dc4' },
      { label: 'mean util %', stroke: '#2b8a3e' },
    ]);
    new ResizeObserver(() => this.resizePlots()).observe(root);
  }

  plot(target, unit, series) {
    return new uPlot({
      width: Math.max(200, target.clientWidth), height: 150,
      scales: { x: { time: false } },
      axes: [{ label: 's' }, { label: unit }],
      series: [{ label: 's' }, ...series.map((s) => ({ ...s, spanGaps: true }))],
      legend: { live: false },
    }, [[], ...series.map(() => [])], target);
  }

  resizePlots() {
    for (const plot of [this.powerPlot, this.corePlot]) {
      const width = Math.max(200, plot.root.parentElement.clientWidth);
      if (Math.abs(plot.width - width) > 4) plot.setSize({ width, height: 150 });
    }
  }

  setPid(pid) { this.pid = pid; this.showApp(); }

  onTelemetry(sample) {
    this.history.add(sample);
    const c = this.history.columns;
    this.powerPlot.setData([c.t, c.node_w, c.package_w, c.budget_w, c.cap_w]);
    this.corePlot.setData([c.t, c.temp_c, c.ghz.map((g) => (g === null ? null : g * 10)), c.util]);
    const last = c.node_w[c.node_w.length - 1];
    const target = this.root.querySelector('#power-plot');
    target.dataset.points = this.history.length;
    target.dataset.lastW = Number.isFinite(last) ? last.toFixed(2) : '';
    target.dataset.maxW = Math.max(...c.node_w.filter(Number.isFinite)).toFixed(2);
    this.showCores(sample.cores || []);
    this.showPackages(sample.packages || [], sample.node_power_w);
  }

  onApps({ apps = [] }) {
    this.apps = apps;
    this.showApp();
  }

  sessionApp() {
    return (this.apps || []).find((a) => a.pid === this.pid) || null;
  }

  showApp() {
    const app = this.sessionApp();
    this.history.setBudget(app && app.effective_budget_w ? app.effective_budget_w : null);
    clear(this.appLine);
    if (!app) {
      this.appLine.append(this.pid ? `program ${this.pid} is not a managed app now` : 'no session picked');
      this.appLine.dataset.threadCount = '';
      return;
    }
    this.appLine.dataset.threadCount = app.thread_count;
    const w = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} W` : '—');
    this.appLine.append(el('b', {}, `${app.program} (${app.pid})`),
      ` power ${w(app.power_w)} / budget ${w(app.power_budget_w)} (effective ${w(app.effective_budget_w)}) · `,
      el('span', { id: 'thread-count-d' }, `D = ${app.thread_count}`));
  }

  showCores(cores) {
    const marked = new Set((this.sessionApp() || {}).cpus || []);
    clear(this.cores);
    this.cores.append(el('tr', {}, ...['core', 'MHz', '°C', 'util'].map((h) => el('th', {}, h))));
    for (const core of cores) {
      const util = Number.isFinite(core.utilisation) ? core.utilisation : 0;
      const bar = el('div', { class: 'util-bar' }, el('div', { style: `width:${Math.round(util * 100)}%` }));
      this.cores.append(el('tr', { 'data-core': core.id, class: marked.has(core.id) ? 'task-core' : '' },
        el('td', {}, marked.has(core.id) ? `${core.id} ●` : String(core.id)),
        el('td', {}, core.cur_khz ? String(Math.round(core.cur_khz / 1000)) : '—'),
        el('td', {}, Number.isFinite(core.temperature_c) ? core.temperature_c.toFixed(0) : '—'),
        el('td', {}, bar)));
    }
  }

  showPackages(packages, nodeW) {
    clear(this.packages);
    const w = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} W` : '—');
    for (const p of packages) {
      const share = Number.isFinite(p.power_limit_w) && p.power_limit_w > 0 ? Math.min(1, p.power_w / p.power_limit_w) : 0;
      this.packages.append(el('div', { 'data-package': p.id },
        `package ${p.id}: ${w(p.power_w)} of cap ${w(p.power_limit_w)}`,
        el('div', { class: 'util-bar' }, el('div', { style: `width:${Math.round(share * 100)}%` }))));
    }
    this.packages.append(el('div', {}, `node ${w(nodeW)}`));
  }
}
