// DAG: GET /api/v1/dag drawn as lanes by level (a task's level is the longest
// chain of upstreams above it), each node coloured by its latest run state.
// Connected components come first, each in its own band (largest first), so
// the edges are on screen however many tasks there are; tasks with no edge at
// all are folded into one list below the graph.
import { get } from './api.js';
import { h, fill, svg, esc, problem } from './ui.js';

const POLL_MS = 5000;
const W = 170, H = 44, GAP_X = 70, GAP_Y = 18, GAP_COMPONENT = 34, PAD = 20, TITLE = 16;

const stateOf = (n) => (n.paused ? 'paused' : (n.last_state || 'none'));
const plural = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;

/// Level of every node: 0 for roots, else 1 + the highest upstream level.
function levels(nodes, edges) {
  const ups = new Map(nodes.map((n) => [n.id, []]));
  for (const e of edges) if (ups.has(e.to)) ups.get(e.to).push(e.from);
  const level = new Map();
  const visit = (id, depth) => {
    if (level.has(id)) return level.get(id);
    if (depth > nodes.length) return 0;  // a cycle (rejected by the API): stop
    const l = Math.max(-1, ...(ups.get(id) || []).filter((u) => ups.has(u)).map((u) => visit(u, depth + 1))) + 1;
    level.set(id, l);
    return l;
  };
  for (const n of nodes) visit(n.id, 0);
  return level;
}

/// Where everything goes (pure, no DOM): `pos` (id -> {x, y}) of the tasks
/// that have an edge, laid out component by component — largest first, ties
/// by lowest task id — each in its own band of rows, lanes by level shared by
/// all bands, and within a lane ordered by the mean row of the upstreams (fewer
/// crossings). `isolated` are the tasks without any edge, by id; `edges` the
/// edges between known tasks; `bands` the y of each line between two
/// components; `width` and `height` the drawing's size (0 when no task has an
/// edge).
export function layout(nodes, edges) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const live = edges.filter((e) => byId.has(e.from) && byId.has(e.to) && e.from !== e.to);
  const near = new Map(nodes.map((n) => [n.id, []]));
  for (const e of live) { near.get(e.from).push(e.to); near.get(e.to).push(e.from); }

  const seen = new Set(), components = [], isolated = [];
  for (const n of [...nodes].sort((a, b) => a.id - b.id)) {
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    if (!near.get(n.id).length) { isolated.push(n); continue; }
    const component = [], todo = [n.id];
    while (todo.length) {
      const id = todo.pop();
      component.push(byId.get(id));
      for (const m of near.get(id)) if (!seen.has(m)) { seen.add(m); todo.push(m); }
    }
    components.push(component);
  }
  components.sort((a, b) => b.length - a.length);  // stable: found in order of lowest id

  const level = levels(nodes.filter((n) => near.get(n.id).length), live);
  const ups = new Map();
  for (const e of live) {
    if (!ups.has(e.to)) ups.set(e.to, []);
    ups.get(e.to).push(e.from);
  }
  const pos = new Map(), bands = [];
  let y = PAD + TITLE, lanes = 0;
  for (const component of components) {
    if (pos.size) bands.push(y - GAP_COMPONENT / 2);
    const lane = [];
    for (const n of component) (lane[level.get(n.id)] ||= []).push(n);
    const row = new Map();
    const mean = (n) => {
      const rs = (ups.get(n.id) || []).filter((u) => row.has(u)).map((u) => row.get(u));
      return rs.length ? rs.reduce((a, b) => a + b, 0) / rs.length : Infinity;
    };
    let rows = 0;
    lane.forEach((members = [], l) => {
      const order = members.map((n) => [mean(n), n]).sort((a, b) => a[0] - b[0] || a[1].id - b[1].id);
      order.forEach(([, n], i) => {
        row.set(n.id, i);
        pos.set(n.id, { x: PAD + l * (W + GAP_X), y: y + i * (H + GAP_Y) });
      });
      rows = Math.max(rows, order.length);
    });
    lanes = Math.max(lanes, lane.length);
    y += rows * (H + GAP_Y) - GAP_Y + GAP_COMPONENT;
  }
  const width = lanes ? PAD * 2 + lanes * (W + GAP_X) - GAP_X : 0;
  const height = components.length ? y - GAP_COMPONENT + PAD : 0;
  return { pos, lanes, bands, components: components.length, isolated, edges: live, width, height };
}

function draw(nodes, { pos, lanes, bands, edges, width, height }) {
  let out = `<svg class="dag" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">
      <path d="M0,0 L10,5 L0,10 z" class="edge-head"/></marker></defs>`;
  for (let l = 0; l < lanes; ++l)
    out += `<text x="${PAD + l * (W + GAP_X)}" y="${PAD}" class="lane-title">level ${l}</text>`;
  for (const b of bands) out += `<line x1="${PAD}" y1="${b}" x2="${width - PAD}" y2="${b}" class="band"/>`;
  for (const e of edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    out += `<path d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}" class="edge" marker-end="url(#arrow)"/>`;
  }
  for (const n of nodes) {
    const p = pos.get(n.id);
    if (!p) continue;
    const state = stateOf(n);
    out += `<a href="#/tasks/${n.id}"><g class="dag-node state-${esc(state)}" data-task="${esc(n.name)}">
      <rect x="${p.x}" y="${p.y}" width="${W}" height="${H}" rx="6"/>
      <text x="${p.x + 8}" y="${p.y + 18}" class="node-name">${esc(n.name.length > 22 ? n.name.slice(0, 21) + '…' : n.name)}</text>
      <text x="${p.x + 8}" y="${p.y + 35}" class="node-state">#${n.id} · ${esc(state)}</text></g></a>`;
  }
  return out + '</svg>';
}

/// The tasks without dependencies, folded: one summary line, a chip per task when opened.
function isolatedList(list, open, toggled) {
  const el = h('details', { class: 'dag-isolated', id: 'dag-isolated', open },
    h('summary', {}, `${plural(list.length, 'task')} without dependencies`),
    h('div', { class: 'dag-chips' }, list.map((n) => {
      const state = stateOf(n);
      return h('a', { class: `dag-chip state-${state}`, href: `#/tasks/${n.id}`, 'data-task': n.name, title: n.name },
        h('b', {}, n.name), h('span', {}, `#${n.id} · ${state}`));
    })));
  el.addEventListener('toggle', () => toggled(el.open));
  return el;
}

export default function dag(view) {
  const box = h('div', { class: 'card scroll' });
  const legend = h('p', { class: 'legend' }, ['success', 'running', 'dispatched', 'pending', 'retry_waiting', 'failed', 'timed_out', 'cancelled', 'paused', 'none']
    .map((s) => h('span', { class: `badge state-${s}` }, s)));
  fill(view.el, h('h1', {}, 'Dependencies'), legend, box);
  // The list of tasks without edges stays as the user left it across polls;
  // until then it is open only when there is no graph to show.
  let isolatedOpen = null;
  view.every(POLL_MS, async () => {
    try {
      const d = await get('/api/v1/dag', view.signal);
      if (!d.nodes.length) return fill(box, h('p', { class: 'muted' }, 'No tasks'));
      const l = layout(d.nodes, d.edges);
      const graph = l.components ? svg(draw(d.nodes, l)) : h('p', { class: 'muted' }, 'No dependencies between tasks');
      const open = isolatedOpen ?? !l.components;
      fill(box, graph, l.isolated.length ? isolatedList(l.isolated, open, (o) => { isolatedOpen = o; }) : null);
    } catch (e) { if (e.name !== 'AbortError') fill(box, problem(e, 'DAG')); }
  });
}
