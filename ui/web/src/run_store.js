// The per-thread intervals of `runs` events, kept sorted by start per
// thread so a view can find the visible ones by binary search.
export class RunStore {
  constructor() {
    this.threads = new Map(); // thread -> [run] sorted by start_ns
    this.minTime = Infinity;
    this.maxTime = 0;
    this.count = 0;
  }

  apply({ runs = [] }) {
    for (const run of runs) {
      let list = this.threads.get(run.thread);
      if (!list) { list = []; this.threads.set(run.thread, list); }
      if (list.length && list[list.length - 1].start_ns > run.start_ns) {
        list.splice(firstEndingAfter(list, run.start_ns, 'start_ns'), 0, run);
      } else {
        list.push(run);
      }
      if (run.start_ns < this.minTime) this.minTime = run.start_ns;
      if (run.end_ns > this.maxTime) this.maxTime = run.end_ns;
      this.count++;
    }
  }

  threadIds() { return [...this.threads.keys()].sort((a, b) => a - b); }
}

// The first index whose `field` is > t (runs are sorted by start_ns).
export function firstEndingAfter(list, t, field = 'start_ns') {
  let lo = 0, hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid][field] <= t) lo = mid + 1; else hi = mid;
  }
  return lo;
}
