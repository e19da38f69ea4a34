// The page's plain modules (no DOM): layout, store, replay, aggregation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskStore } from '../src/task_store.js';
import { aggregate } from '../src/aggregate.js';
import { stateAt, eventTimes, nextTime } from '../src/replay.js';
import { TelemetryHistory, HISTORY_SECONDS } from '../src/telemetry_history.js';

const task = (id, extra = {}) => ({ id, parent: 0, function: 'f', state: 'not_queued', thread: 0,
  created_ns: 0, start_ns: 0, end_ns: 0, ...extra });
const edge = (from, to) => ({ from, to, deps: [{ address: '0x10', kind: 'inout' }] });

test('a task goes one layer below its deepest predecessor or its parent', () => {
  const store = new TaskStore();
  store.apply({ tasks: [task(1), task(2), task(3, { parent: 1 }), task(4)], edges: [edge(1, 2), edge(2, 4), edge(1, 4)] });
  const layer = (id) => store.tasks.get(id).layer;
  assert.deepEqual([layer(1), layer(2), layer(3), layer(4)], [0, 1, 1, 2]);
});

test('ids out of creation order still place predecessors first', () => {
  const store = new TaskStore();
  // Per-thread ids: the successor has the smaller id.
  store.apply({ tasks: [task(5), task(2 ** 40 + 1)], edges: [edge(2 ** 40 + 1, 5)] });
  assert.equal(store.tasks.get(5).layer, 1);
  assert.equal(store.tasks.get(2 ** 40 + 1).layer, 0);
});

test('placed tasks never move as the graph grows, and no two share a place', () => {
  const store = new TaskStore();
  store.apply({ tasks: [task(1), task(2)], edges: [edge(1, 2)] });
  const before = [...store.tasks.values()].map((t) => [t.id, t.layer, t.slot]);
  const more = [];
  for (let id = 3; id < 400; id++) more.push(task(id, { parent: 1 + (id % 2) }));
  store.apply({ tasks: more, edges: [edge(2, 3), edge(1, 3)] });
  for (const [id, layer, slot] of before) {
    assert.equal(store.tasks.get(id).layer, layer);
    assert.equal(store.tasks.get(id).slot, slot);
  }
  const places = new Set([...store.tasks.values()].map((t) => `${t.layer}:${t.slot}`));
  assert.equal(places.size, store.size);
});

test('an update changes the state, an edge sent twice counts once, search finds by name and #id', () => {
  const store = new TaskStore();
  store.apply({ tasks: [task(1, { function: 'potrf (lu.c:3)' }), task(2, { function: 'gemm (lu.c:9)' })], edges: [edge(1, 2)] });
  store.apply({ tasks: [task(2, { function: 'gemm (lu.c:9)', state: 'finished' })], edges: [edge(1, 2)] });
  assert.equal(store.size, 2);
  assert.equal(store.tasks.get(2).state, 'finished');
  assert.equal(store.successors.get(1).length, 1);
  assert.deepEqual(store.search('GEMM').map((t) => t.id), [2]);
  assert.deepEqual(store.search('#1').map((t) => t.id), [1]);
  assert.deepEqual(store.search('#7'), []);
  assert.deepEqual(store.countByState(), { not_queued: 0, queued: 1, running: 0, finished: 1 });
  assert.equal(store.tasks.get(2).reported, 'finished');
});

test('the layout visits exactly the tasks in a window', () => {
  const store = new TaskStore();
  const tasks = [];
  for (let id = 1; id <= 500; id++) tasks.push(task(id));
  store.apply({ tasks, edges: [] });
  const seen = [];
  store.layout.forEachIn(0, 0, 100, 199, (t) => seen.push(t.slot));
  assert.equal(seen.length, 100);
  assert.ok(seen.every((s) => s >= 100 && s <= 199));
});

test('aggregation counts tasks by layer, function and state', () => {
  const store = new TaskStore();
  store.apply({ tasks: [task(1, { function: 'a' }), task(2, { function: 'b', state: 'finished' }),
    task(3, { function: 'b' }), task(4, { function: 'a' })], edges: [edge(1, 4)] });
  const rows = aggregate(store);
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0].blocks.map((b) => [b.function, b.total, b.finished]), [['a', 1, 0], ['b', 2, 1]]);
  assert.deepEqual(rows[1].blocks.map((b) => [b.function, b.total]), [['a', 1]]);
});

test('the state at time t follows created, start and end, and the predecessors', () => {
  const a = task(1, { created_ns: 10, start_ns: 20, end_ns: 30 });
  const b = task(2, { created_ns: 15, start_ns: 40, end_ns: 50 });
  const preds = (t) => (t.id === 2 ? [a] : []);
  assert.deepEqual([5, 12, 25, 35].map((t) => stateAt(a, t, preds)), [undefined, 'queued', 'running', 'finished']);
  assert.deepEqual([12, 16, 30, 45, 50].map((t) => stateAt(b, t, preds)),
    [undefined, 'not_queued', 'queued', 'running', 'finished']);
  const times = eventTimes([a, b]);
  assert.deepEqual(times, [10, 15, 20, 30, 40, 50]);
  assert.equal(nextTime(times, 20, +1), 30);
  assert.equal(nextTime(times, 20, -1), 15);
  assert.equal(nextTime(times, 50, +1), 50);
});

test('the telemetry history keeps the last minutes and sums the packages when the node has no meter', () => {
  const history = new TelemetryHistory();
  for (let s = 0; s <= HISTORY_SECONDS + 10; s++) {
    history.add({ monotonic_ns: s * 1e9, node_power_w: null, cores: [{ utilisation: 0.5, cur_khz: 2e6, temperature_c: 40 }],
      packages: [{ power_w: 10, power_limit_w: 50 }, { power_w: 5, power_limit_w: 50 }] });
  }
  const c = history.columns;
  assert.equal(c.t[c.t.length - 1] - c.t[0], HISTORY_SECONDS);
  assert.equal(c.node_w[0], 15);
  assert.equal(c.cap_w[0], 100);
  assert.equal(c.util[0], 50);
});

test('the running aggregation matches a fresh count after updates', () => {
  const store = new TaskStore();
  const tasks = [];
  for (let id = 1; id <= 50; id++) tasks.push(task(id, { function: id % 3 ? 'a' : 'b', parent: id > 5 ? id % 5 + 1 : 0 }));
  store.apply({ tasks, edges: [edge(1, 2), edge(2, 3)] });
  store.apply({ tasks: tasks.filter((t) => t.id % 4 === 0).map((t) => ({ ...t, state: 'running' })), edges: [] });
  store.apply({ tasks: tasks.filter((t) => t.id % 8 === 0).map((t) => ({ ...t, state: 'finished' })), edges: [edge(2, 3)] });
  assert.deepEqual(store.aggregation.rows(), aggregate(store));
  assert.deepEqual(store.countByState(), { not_queued: 2, queued: 36, running: 6, finished: 6 });
  assert.equal(store.edgeCount, 2);
});

test('a task is shown queued once every predecessor has finished, as DebugStatus counts it', () => {
  const store = new TaskStore();
  store.apply({ tasks: [task(1), task(2), task(3)], edges: [edge(1, 3), edge(2, 3)] });
  const state = (id) => store.tasks.get(id).state;
  assert.deepEqual([state(1), state(2), state(3)], ['queued', 'queued', 'not_queued']);
  store.apply({ tasks: [task(1, { state: 'finished' })], edges: [] });
  assert.equal(state(3), 'not_queued');
  store.apply({ tasks: [task(2, { state: 'running' })], edges: [] });
  store.apply({ tasks: [task(2, { state: 'finished' })], edges: [] });
  assert.equal(state(3), 'queued');
  // A late edge from an unfinished task puts it back.
  store.apply({ tasks: [task(4)], edges: [edge(4, 3)] });
  assert.equal(state(3), 'not_queued');
  assert.deepEqual(store.countByState(), { not_queued: 1, queued: 1, running: 0, finished: 2 });
  assert.deepEqual(store.aggregation.rows(), aggregate(store));
});
