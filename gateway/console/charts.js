// Prometheus text parsing and hand-drawn SVG charts for the overview page.
import { esc } from './ui.js';

/// Parses Prometheus text format into [{name, labels, value}] (comments skipped).
export function parsePrometheus(text) {
  const out = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/);
    if (!m) continue;
    const labels = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      let l;
      while ((l = re.exec(m[3]))) labels[l[1]] = l[2].replace(/\\(.)/g, '$1');
    }
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/// The sum of every sample called `name` whose labels include `match`.
export function sum(samples, name, match = {}) {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) total += s.value;
  }
  return total;
}

/// Cumulative histogram buckets of `name` (summed over other labels): [[le, count]].
export function buckets(samples, name) {
  const by = new Map();
  for (const s of samples) {
    if (s.name !== `${name}_bucket`) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    by.set(le, (by.get(le) || 0) + s.value);
  }
  return [...by.entries()].sort((a, b) => a[0] - b[0]);
}

/// The q-quantile upper bound from bucket count differences (b - a).
export function quantile(a, b, q) {
  const diff = b.map(([le, c], i) => [le, c - ((a[i] && a[i][1]) || 0)]);
  const total = diff.length ? diff[diff.length - 1][1] : 0;
  if (total <= 0) return null;
  for (const [le, c] of diff) if (c >= q * total) return le === Infinity ? null : le;
  return null;
}

/// The smallest 1, 2, 2.5 or 5 times a power of ten that is >= x (axis tops).
function niceCeil(x) {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

/// A line chart of `points` ([{t, v}], v may be null for gaps) as SVG markup.
export function lineChart(points, { title, unit = '', max = null, floor = 1, color = '#2f6fde' } = {}) {
  const W = 320, H = 120, L = 40, B = 18, T = 20;
  const vals = points.map((p) => p.v).filter((v) => v !== null && isFinite(v));
  const top = max !== null ? max : niceCeil(Math.max(floor, ...vals) * 1.1);
  const t0 = points.length ? points[0].t : 0;
  const t1 = points.length ? points[points.length - 1].t : 1;
  const x = (t) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - 6);
  const y = (v) => T + (1 - v / top) * (H - T - B);
  let d = '', pen = false;
  for (const p of points) {
    if (p.v === null || !isFinite(p.v)) { pen = false; continue; }
    d += `${pen ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`;
    pen = true;
  }
  const last = vals.length ? vals[vals.length - 1] : null;
  const fmt = (v) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toPrecision(2));
  const now = last === null ? '—' : `${fmt(last)}${unit}`;
  const span = Math.round((t1 - t0) / 1000);
  const spanText = span >= 120 ? `last ${Math.round(span / 60)} min` : `last ${span} s`;
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">
    <text x="${L}" y="13" class="chart-title">${esc(title)}</text>
    <text x="${W - 6}" y="13" text-anchor="end" class="chart-now">${esc(now)}</text>
    <line x1="${L}" y1="${y(0)}" x2="${W - 6}" y2="${y(0)}" class="axis"/>
    <line x1="${L}" y1="${T}" x2="${W - 6}" y2="${T}" class="grid"/>
    <text x="${L - 4}" y="${T + 4}" text-anchor="end" class="tick">${esc(String(+top.toPrecision(3)))}</text>
    <text x="${L - 4}" y="${y(0) + 4}" text-anchor="end" class="tick">0</text>
 <text x="${W - 6}" y="${H - 4}" text-anchor="end" class="tick">${esc(spanText)}</text>
    <path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>
  </svg>`;
}

/// A horizontal bar for a fraction 0..1 with a caption.
export function bar(fraction, caption) {
  const f = Math.max(0, Math.min(1, Number(fraction) || 0));
  const level = f > 0.9 ? 'high' : f > 0.7 ? 'mid' : 'low';
  return `<svg class="bar" viewBox="0 0 200 16" preserveAspectRatio="none" role="img"
      aria-label="${esc(caption)}"><rect x="0" y="0" width="200" height="16" class="bar-bg"/>
    <rect x="0" y="0" width="${(200 * f).toFixed(1)}" height="16" class="bar-${level}"/></svg>`;
}

/// One stacked horizontal bar of `parts` ([[label, value, cssClass]]) with a legend.
export function stackedBar(parts) {
  const total = parts.reduce((a, [, v]) => a + v, 0);
  let legend = '', lx = 0;
  for (const [label, v, cls] of parts) {
    legend += `<rect x="${lx}" y="28" width="10" height="10" class="${esc(cls)}"/><text x="${lx + 14}" y="37" class="tick">${esc(label)} ${v}</text>`;
    lx += 16 + 7 * (label.length + String(v).length + 1);
  }
  const W = Math.max(600, lx);
  let x = 0, rects = '';
  for (const [label, v, cls] of parts) {
    const w = total > 0 ? (W * v) / total : 0;
    if (w > 0) rects += `<rect x="${x.toFixed(1)}" y="0" width="${w.toFixed(1)}" height="18" class="${esc(cls)}"><title>${esc(label)}: ${v}</title></rect>`;
    x += w;
  }
  if (total === 0) rects = `<rect x="0" y="0" width="${W}" height="18" class="bar-bg"/>`;
  return `<svg class="stacked" viewBox="0 0 ${W} 42" role="img" aria-label="runs by state">${rects}${legend}</svg>`;
}
