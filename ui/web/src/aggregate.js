// The aggregated view's data: per layer, one block per function with its
// tasks' counts by state. Past a few ten thousand tasks single boxes are
// sub-pixel noise; this is what the user can still read. The live view
// keeps it up to date task by task (O(1) per change); a replay's state at
// time t is counted afresh.
export class Aggregation {
  constructor() { this.layers = []; }

  block(layer, name) {
    const row = this.layers[layer] || (this.layers[layer] = new Map());
    let block = row.get(name);
    if (!block) {
      block = { function: name, total: 0, not_queued: 0, queued: 0, running: 0, finished: 0 };
      row.set(name, block);
    }
    return block;
  }

  add(task, state, sign = 1) {
    if (task.layer < 0 || !state) return;
    const block = this.block(task.layer, task.function);
    block.total += sign;
    block[state] += sign;
  }

  remove(task, state) { this.add(task, state, -1); }

  rows() {
    return Array.from(this.layers, (row, layer) => ({
      layer,
      blocks: row ? [...row.values()].filter((b) => b.total > 0).sort((a, b) => a.function.localeCompare(b.function)) : [],
    }));
  }
}

export function aggregate(store, stateOf = (task) => task.state) {
  const aggregation = new Aggregation();
  for (const task of store.tasks.values()) aggregation.add(task, stateOf(task));
  return aggregation.rows();
}
