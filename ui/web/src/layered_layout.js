// An incremental layered layout (the shape of Temanejo's Figure 2): a
// task's layer is one below the deepest of its predecessors and its parent;
// within the layer it takes the free slot nearest the median slot of its
// predecessors (or its parent's). A placed task never moves, so a growing graph does not jump
// under the user's eyes, and placing costs O(1) amortised per task.
const NEAR = 48; // how far a task may land from its wish before it goes to the layer's end

export class LayeredLayout {
  constructor() {
    this.layers = []; // per layer: {used: Set of slots, end: one past the rightmost}
    this.buckets = new Map(); // spatial index: "layer:slot>>6" -> [task]
  }

  get depth() { return this.layers.length; }

  place(task, predecessors, parent) {
    let layer = 0;
    const slots = [];
    for (const p of predecessors) {
      if (!p || p.layer < 0) continue;
      layer = Math.max(layer, p.layer + 1);
      slots.push(p.slot);
    }
    if (parent && parent.layer >= 0) {
      layer = Math.max(layer, parent.layer + 1);
      if (!slots.length) slots.push(parent.slot);
    }
    // The median predecessor, not the mean: a stencil's neighbours on both
    // sides cancel, and a grid's boundary does not drag every layer sideways.
    slots.sort((a, b) => a - b);
    const wish = slots.length ? slots[(slots.length - 1) >> 1] : -1;
    while (this.layers.length <= layer) this.layers.push({ used: new Set(), end: 0 });
    const row = this.layers[layer];
    const slot = this.freeSlot(row, wish >= 0 ? wish : row.end);
    row.used.add(slot);
    if (slot >= row.end) row.end = slot + 1;
    task.layer = layer;
    task.slot = slot;
    const key = bucketKey(layer, slot);
    const bucket = this.buckets.get(key);
    if (bucket) bucket.push(task); else this.buckets.set(key, [task]);
  }

  freeSlot(row, wish) {
    if (wish < 0) wish = 0;
    for (let d = 0; d <= NEAR; d++) {
      if (!row.used.has(wish + d)) return wish + d;
      if (d && wish - d >= 0 && !row.used.has(wish - d)) return wish - d;
    }
    return row.end;
  }

  width() {
    let w = 0;
    for (const row of this.layers) w = Math.max(w, row.end);
    return w;
  }

  // Calls fn(task) for the tasks in layers [l0, l1] and slots [s0, s1]
  // (the visible part of the graph), bucket by bucket.
  forEachIn(l0, l1, s0, s1, fn) {
    l0 = Math.max(0, l0); l1 = Math.min(this.layers.length - 1, l1);
    const b0 = Math.max(0, s0) >> 6, b1 = Math.max(0, s1) >> 6;
    for (let l = l0; l <= l1; l++) {
      if (b1 - b0 > this.layers[l].end / 64 + 2) {
        // Zoomed far out: fewer buckets exist than the range spans.
        for (let b = 0; b <= this.layers[l].end >> 6; b++) this.visitBucket(l, b, s0, s1, fn);
      } else {
        for (let b = b0; b <= b1; b++) this.visitBucket(l, b, s0, s1, fn);
      }
    }
  }

  visitBucket(layer, b, s0, s1, fn) {
    const bucket = this.buckets.get(layer + ':' + b);
    if (!bucket) return;
    for (const task of bucket) if (task.slot >= s0 && task.slot <= s1) fn(task);
  }
}

function bucketKey(layer, slot) { return layer + ':' + (slot >> 6); }
