// The task graph on a <canvas>: only what is visible is drawn, redraws are
// batched into one animation frame, and past AGGREGATE_AT tasks the view
// shows one block per function and layer unless the user asks for boxes.
import { functionColour, STATE_BORDER } from './colours.js';
import { aggregate } from './aggregate.js';

export const AGGREGATE_AT = 20000;
const SX = 44, SY = 56, W = 34, H = 22; // slot and layer pitch, box size (world units)

export class GraphView {
  constructor(canvas, store, { onSelect, onHover }) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.store = store;
    this.onSelect = onSelect;
    this.onHover = onHover;
    this.scale = 1;
    this.offsetX = 20;
    this.offsetY = 20;
    this.selected = null;
    this.matches = new Set();
    this.blocked = new Set();
    this.blockedFunctions = new Set();
    this.stateOf = (task) => task.state;
    this.mode = 'auto'; // 'auto' | 'tasks' | 'aggregate'
    this.aggregateCache = null;
    this.replaying = false;
    this.drawnEdges = [];
    this.frameRequested = false;
    this.followGrowth = true;
    this.listen();
    new ResizeObserver(() => this.resize()).observe(canvas);
    this.resize();
  }

  get aggregated() {
    return this.mode === 'aggregate' || (this.mode === 'auto' && this.store.size > AGGREGATE_AT);
  }

  resize() {
    const ratio = window.devicePixelRatio || 1;
    const { width, height } = this.canvas.getBoundingClientRect();
    this.canvas.width = Math.max(1, Math.round(width * ratio));
    this.canvas.height = Math.max(1, Math.round(height * ratio));
    this.ratio = ratio;
    this.redraw();
  }

  redraw() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      this.draw();
    });
  }

  // The graph grew: until the user pans or zooms, keep it all in view.
  grew() {
    this.aggregateCache = null;
    if (this.followGrowth) this.fit();
    this.redraw();
  }

  fit() {
    const width = Math.max(1, this.store.layout.width()) * SX;
    const height = Math.max(1, this.store.layout.depth) * SY;
    const { width: cw, height: ch } = this.canvas.getBoundingClientRect();
    const scale = Math.min(2, Math.max(0.002, Math.min((cw - 40) / width, (ch - 40) / height)));
    this.scale = scale;
    this.offsetX = 20;
    this.offsetY = 20;
  }

  toWorld(px, py) { return [(px - this.offsetX) / this.scale, (py - this.offsetY) / this.scale]; }

  centerOn(task) {
    const { width, height } = this.canvas.getBoundingClientRect();
    if (this.scale < 0.6) this.scale = 1;
    this.offsetX = width / 2 - task.slot * SX * this.scale;
    this.offsetY = height / 2 - task.layer * SY * this.scale;
    this.followGrowth = false;
    this.redraw();
  }

  draw() {
    const { ctx, ratio } = this;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.setTransform(ratio * this.scale, 0, 0, ratio * this.scale, ratio * this.offsetX, ratio * this.offsetY);
    this.drawnEdges = [];
    this.canvas.dataset.mode = this.aggregated ? 'aggregate' : 'tasks';
    if (this.aggregated) this.drawAggregate(); else this.drawTasks();
  }

  visibleRange() {
    const [x0, y0] = this.toWorld(0, 0);
    const rect = this.canvas.getBoundingClientRect();
    const [x1, y1] = this.toWorld(rect.width, rect.height);
    return {
      l0: Math.floor(y0 / SY) - 1, l1: Math.ceil(y1 / SY) + 1,
      s0: Math.floor(x0 / SX) - 1, s1: Math.ceil(x1 / SX) + 1,
    };
  }

  drawTasks() {
    const { ctx, store } = this;
    const { l0, l1, s0, s1 } = this.visibleRange();
    const visible = [];
    store.layout.forEachIn(l0, l1, s0, s1, (task) => { if (this.stateOf(task)) visible.push(task); });
    this.canvas.dataset.visible = visible.length;
    const pixels = SX * this.scale;
    if (pixels >= 8) this.drawEdges(visible, pixels);
    if (pixels < 4) {
      // Sub-pixel boxes: one fill per function, no borders.
      const byColour = new Map();
      for (const task of visible) {
        const index = store.functionIndex(task.function);
        (byColour.get(index) || byColour.set(index, []).get(index)).push(task);
      }
      for (const [index, tasks] of byColour) {
        ctx.fillStyle = functionColour(index);
        for (const t of tasks) ctx.fillRect(t.slot * SX - W / 2, t.layer * SY - H / 2, W, H);
      }
    } else {
      for (const task of visible) this.drawBox(task, pixels);
    }
    if (this.selected && this.stateOf(this.selected)) this.outline(this.selected, '#000', 4);
  }

  drawBox(task, pixels) {
    const { ctx } = this;
    const x = task.slot * SX - W / 2, y = task.layer * SY - H / 2;
    ctx.fillStyle = functionColour(this.store.functionIndex(task.function));
    ctx.fillRect(x, y, W, H);
    const border = STATE_BORDER[this.stateOf(task)] || STATE_BORDER.not_queued;
    ctx.strokeStyle = border.colour;
    ctx.lineWidth = border.width;
    ctx.setLineDash(border.dash);
    ctx.strokeRect(x, y, W, H);
    ctx.setLineDash([]);
    if (this.blocked.has(task.id) || this.blockedFunctions.has(task.function)) {
      ctx.fillStyle = '#c92a2a';
      ctx.fillRect(x + W - 7, y + 1, 6, 6);
    }
    if (this.matches.has(task.id)) this.outline(task, '#f08c00', 3);
    if (pixels >= 30) {
      ctx.fillStyle = '#111';
      ctx.font = '10px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(String(task.id), task.slot * SX, task.layer * SY);
    }
  }

  outline(task, colour, width) {
    const { ctx } = this;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width / Math.max(this.scale, 0.05);
    ctx.strokeRect(task.slot * SX - W / 2 - 3, task.layer * SY - H / 2 - 3, W + 6, H + 6);
  }

  drawEdges(visible, pixels) {
    const { ctx, store } = this;
    const shown = new Set(visible.map((t) => t.id));
    ctx.lineWidth = 1 / this.scale;
    if (pixels >= 20) {
      // Parent to child: faint, so dependences stand out.
      ctx.strokeStyle = 'rgba(0,0,0,0.12)';
      ctx.beginPath();
      for (const task of visible) {
        const parent = store.tasks.get(task.parent);
        if (!parent || parent.layer < 0 || !this.stateOf(parent)) continue;
        ctx.moveTo(parent.slot * SX, parent.layer * SY + H / 2);
        ctx.lineTo(task.slot * SX, task.layer * SY - H / 2);
      }
      ctx.stroke();
    }
    ctx.strokeStyle = '#555';
    ctx.beginPath();
    const line = (from, to, edge) => {
      const x1 = from.slot * SX, y1 = from.layer * SY + H / 2, x2 = to.slot * SX, y2 = to.layer * SY - H / 2;
      ctx.moveTo(x1, y1);
      ctx.lineTo(x2, y2);
      this.drawnEdges.push({ x1, y1, x2, y2, from: from.id, to: to.id, deps: edge.deps });
    };
    for (const task of visible) {
      for (const edge of store.successors.get(task.id) || []) {
        const to = store.tasks.get(edge.to);
        if (to && to.layer >= 0 && this.stateOf(to)) line(task, to, edge);
      }
      for (const edge of store.predecessors.get(task.id) || []) {
        if (shown.has(edge.from)) continue;
        const from = store.tasks.get(edge.from);
        if (from && from.layer >= 0 && this.stateOf(from)) line(from, task, edge);
      }
    }
    ctx.stroke();
  }

  drawAggregate() {
    const { ctx } = this;
    // Live: the store's running counts. Replay: counted at t, once per t.
    let rows;
    if (this.replaying) {
      if (!this.aggregateCache) this.aggregateCache = aggregate(this.store, this.stateOf);
      rows = this.aggregateCache;
    } else {
      rows = this.store.aggregation.rows();
    }
    this.blocks = [];
    let shown = 0;
    for (const { layer, blocks } of rows) {
      let x = 0;
      for (const block of blocks) {
        const width = SX * (1 + Math.log2(block.total)) * 1.5;
        const y = layer * SY - H / 2;
        ctx.fillStyle = functionColour(this.store.functionIndex(block.function));
        ctx.fillRect(x, y, width, H);
        // The block's tasks by state, as a bar along its bottom.
        let bx = x;
        for (const state of ['finished', 'running', 'queued', 'not_queued']) {
          const w = (width * block[state]) / block.total;
          ctx.fillStyle = STATE_BORDER[state].colour;
          ctx.fillRect(bx, y + H - 5, w, 5);
          bx += w;
        }
        if (width * this.scale > 60) {
          ctx.fillStyle = '#111';
          ctx.font = '10px system-ui, sans-serif';
          ctx.textAlign = 'left';
          ctx.textBaseline = 'middle';
          ctx.fillText(`${shortName(block.function)} ×${block.total}`, x + 3, layer * SY - 3, width - 6);
        }
        this.blocks.push({ x, y, width, layer, block });
        x += width + 6;
        shown++;
      }
    }
    this.canvas.dataset.visible = shown;
  }

  taskAt(px, py) {
    const [x, y] = this.toWorld(px, py);
    const layer = Math.round(y / SY), slot = Math.round(x / SX);
    let hit = null;
    this.store.layout.forEachIn(layer, layer, slot, slot, (task) => {
      if (this.stateOf(task) && Math.abs(x - task.slot * SX) <= W / 2 + 2 && Math.abs(y - task.layer * SY) <= H / 2 + 2) hit = task;
    });
    return hit;
  }

  blockAt(px, py) {
    const [x, y] = this.toWorld(px, py);
    return (this.blocks || []).find((b) => x >= b.x && x <= b.x + b.width && y >= b.y && y <= b.y + H);
  }

  edgeAt(px, py) {
    const [x, y] = this.toWorld(px, py);
    const reach = 5 / this.scale;
    let best = null, bestDistance = reach;
    for (const e of this.drawnEdges) {
      const d = segmentDistance(x, y, e);
      if (d < bestDistance) { best = e; bestDistance = d; }
    }
    return best;
  }

  listen() {
    const canvas = this.canvas;
    let drag = null;
    canvas.addEventListener('mousedown', (event) => {
      drag = { x: event.clientX, y: event.clientY, moved: false };
    });
    window.addEventListener('mousemove', (event) => {
      if (drag) {
        const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
        if (drag.moved) {
          this.offsetX += dx; this.offsetY += dy;
          drag.x = event.clientX; drag.y = event.clientY;
          this.followGrowth = false;
          this.redraw();
        }
        return;
      }
      if (event.target !== canvas) return;
      const rect = canvas.getBoundingClientRect();
      const px = event.clientX - rect.left, py = event.clientY - rect.top;
      const edge = this.taskAt(px, py) ? null : this.edgeAt(px, py);
      this.onHover(edge, event.clientX, event.clientY);
    });
    window.addEventListener('mouseup', (event) => {
      if (drag && !drag.moved && event.target === canvas) {
        const rect = canvas.getBoundingClientRect();
        const px = event.clientX - rect.left, py = event.clientY - rect.top;
        if (this.aggregated) {
          const hit = this.blockAt(px, py);
          this.onSelect(null, hit ? hit.block : null);
        } else {
          this.onSelect(this.taskAt(px, py));
        }
      }
      drag = null;
    });
    canvas.addEventListener('wheel', (event) => {
      event.preventDefault();
      const rect = canvas.getBoundingClientRect();
      this.zoomAt(event.clientX - rect.left, event.clientY - rect.top, Math.exp(-event.deltaY * 0.0015));
    }, { passive: false });
  }

  zoomAt(px, py, factor) {
    const scale = Math.min(8, Math.max(0.002, this.scale * factor));
    this.offsetX = px - ((px - this.offsetX) * scale) / this.scale;
    this.offsetY = py - ((py - this.offsetY) * scale) / this.scale;
    this.scale = scale;
    this.followGrowth = false;
    this.redraw();
  }
}

function segmentDistance(x, y, { x1, y1, x2, y2 }) {
  const dx = x2 - x1, dy = y2 - y1;
  const length = dx * dx + dy * dy;
  const t = length ? Math.max(0, Math.min(1, ((x - x1) * dx + (y - y1) * dy) / length)) : 0;
  return Math.hypot(x - (x1 + t * dx), y - (y1 + t * dy));
}

function shortName(name) { return (name || '?').replace(/ \(.*\)$/, ''); }
