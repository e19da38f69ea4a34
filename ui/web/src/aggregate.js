// The aggregated view's data: per layer, one block per function with its
// tasks' counts by state. Past a few ten thousand tasks single boxes are
// sub-pixel noise; this is what the user can still read.
export function aggregate(store, stateOf = (task) => task.state) {
  const layers = [];
  for (const task of store.tasks.values()) {
    if (task.layer < 0) continue;
    const state = stateOf(task);
    if (!state) continue;
    const row = layers[task.layer] || (layers[task.layer] = new Map());
    let block = row.get(task.function);
    if (!block) {
      block = { function: task.function, total: 0, not_queued: 0, queued: 0, running: 0, finished: 0 };
      row.set(task.function, block);
    }
    block.total++;
    block[state]++;
  }
  return Array.from(layers, (row, layer) => ({
    layer,
    blocks: row ? [...row.values()].sort((a, b) => a.function.localeCompare(b.function)) : [],
  }));
}
