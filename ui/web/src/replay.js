// A recorded session at time t: each task's state from its created, start
// and end times (what the console's `goto` shows). undefined: not created yet.
export function stateAt(task, t, predecessorsOf) {
  if (!task.created_ns || t < task.created_ns) return undefined;
  if (task.start_ns && t >= task.start_ns) return task.end_ns && t >= task.end_ns ? 'finished' : 'running';
  for (const p of predecessorsOf(task)) {
    if (!p || !p.end_ns || p.end_ns > t) return 'not_queued';
  }
  return 'queued';
}

// The times at which something happens, sorted and unique: `next`/`prev`
// step through them.
export function eventTimes(tasks) {
  const times = [];
  for (const t of tasks) {
    if (t.created_ns) times.push(t.created_ns);
    if (t.start_ns) times.push(t.start_ns);
    if (t.end_ns) times.push(t.end_ns);
  }
  times.sort((a, b) => a - b);
  return times.filter((v, i) => i === 0 || v !== times[i - 1]);
}

export function nextTime(times, t, direction) {
  // Binary search for the first time > t (or the last < t going back).
  let lo = 0, hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (direction > 0 ? times[mid] <= t : times[mid] < t) lo = mid + 1; else hi = mid;
  }
  if (direction > 0) return lo < times.length ? times[lo] : t;
  return lo > 0 ? times[lo - 1] : t;
}
