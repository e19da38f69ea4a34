// The time slider of a recorded session: the graph and the timeline show
// the state at time t (the console's `goto`), with previous/next event.
import { eventTimes, nextTime } from './replay.js';

export class ReplayControl {
  constructor(root, { onTime }) {
    this.root = root;
    this.slider = root.querySelector('#replay-slider');
    this.label = root.querySelector('#replay-time');
    this.onTime = onTime;
    this.times = [];
    this.t = null;
    this.slider.addEventListener('input', () => this.go(this.fromSlider()));
    root.querySelector('#replay-prev').addEventListener('click', () => this.go(nextTime(this.times, this.t, -1)));
    root.querySelector('#replay-next').addEventListener('click', () => this.go(nextTime(this.times, this.t, +1)));
  }

  enable(tasks) {
    this.times = eventTimes(tasks);
    this.root.hidden = !this.times.length;
    if (this.times.length) this.go(this.times[this.times.length - 1]);
  }

  disable() { this.root.hidden = true; this.t = null; }

  fromSlider() {
    const lo = this.times[0], hi = this.times[this.times.length - 1];
    return lo + ((hi - lo) * Number(this.slider.value)) / 1000;
  }

  go(t) {
    if (!this.times.length) return;
    const lo = this.times[0], hi = this.times[this.times.length - 1];
    this.t = Math.min(hi, Math.max(lo, t));
    this.slider.value = hi > lo ? Math.round((1000 * (this.t - lo)) / (hi - lo)) : 1000;
    this.label.textContent = `t = ${((this.t - lo) / 1e6).toFixed(3)} ms`;
    this.root.dataset.t = this.t;
    this.onTime(this.t);
  }
}
