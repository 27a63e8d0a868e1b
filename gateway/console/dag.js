// DAG: GET /api/v1/dag drawn as lanes by level (a task's level is the longest
// chain of upstreams above it), each node coloured by its latest run state.
import { get } from './api.js';
import { h, fill, svg, esc, problem } from './ui.js';

const POLL_MS = 5000;
const W = 170, H = 44, GAP_X = 70, GAP_Y = 18, PAD = 20;

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

function draw({ nodes, edges }) {
  const level = levels(nodes, edges);
  const lanes = [];
  for (const n of nodes) (lanes[level.get(n.id)] ||= []).push(n);
  const pos = new Map();
  lanes.forEach((lane, l) => lane.forEach((n, i) =>
    pos.set(n.id, { x: PAD + l * (W + GAP_X), y: PAD + 16 + i * (H + GAP_Y) })));
  const width = PAD * 2 + lanes.length * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + 16 + Math.max(...lanes.map((l) => l.length)) * (H + GAP_Y);
  let out = `<svg class="dag" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">
      <path d="M0,0 L10,5 L0,10 z" class="edge-head"/></marker></defs>`;
  lanes.forEach((_, l) => {
    out += `<text x="${PAD + l * (W + GAP_X)}" y="${PAD}" class="lane-title">level ${l}</text>`;
  });
  for (const e of edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    out += `<path d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}" class="edge" marker-end="url(#arrow)"/>`;
  }
  for (const n of nodes) {
    const p = pos.get(n.id);
    const state = n.paused ? 'paused' : (n.last_state || 'none');
    out += `<a href="#/tasks/${n.id}"><g class="dag-node state-${esc(state)}" data-task="${esc(n.name)}">
      <rect x="${p.x}" y="${p.y}" width="${W}" height="${H}" rx="6"/>
      <text x="${p.x + 8}" y="${p.y + 18}" class="node-name">${esc(n.name.length > 22 ? n.name.slice(0, 21) + '…' : n.name)}</text>
      <text x="${p.x + 8}" y="${p.y + 35}" class="node-state">#${n.id} · ${esc(state)}</text></g></a>`;
  }
  return out + '</svg>';
}

export default function dag(view) {
  const box = h('div', { class: 'card scroll' });
  const legend = h('p', { class: 'legend' }, ['success', 'running', 'dispatched', 'pending', 'retry_waiting', 'failed', 'timed_out', 'cancelled', 'paused', 'none']
    .map((s) => h('span', { class: `badge state-${s}` }, s)));
  fill(view.el, h('h1', {}, 'Dependencies'), legend, box);
  view.every(POLL_MS, async () => {
    try {
      const d = await get('/api/v1/dag', view.signal);
      fill(box, d.nodes.length ? svg(draw(d)) : h('p', { class: 'muted' }, 'No tasks'));
    } catch (e) { if (e.name !== 'AbortError') fill(box, problem(e, 'DAG')); }
  });
}
