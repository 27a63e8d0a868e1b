// Workers: load bars (load / max_load, CPU, memory), labels, status, drain /
// undrain, and the last hour of load and CPU per worker from
// GET /api/v1/workers/load-history (nothing shown while that route is missing).
import { api, get } from './api.js';
import { h, fill, svg, labels, badge, time, problem } from './ui.js';
import { bar, lineChart } from './charts.js';

const POLL_MS = 3000;
const HISTORY_MS = 30000;  // the cluster samples worker load every 30 s
const HOUR_MS = 3600 * 1000;

function meter(caption, fraction, text) {
  return h('div', { class: 'meter' }, h('span', { class: 'meter-label' }, caption), svg(bar(fraction, caption)),
    h('span', { class: 'meter-value' }, text));
}

export default function workers(view) {
  const list = h('div', { class: 'cards' });
  const message = h('p', { class: 'error' });
  fill(view.el, h('h1', {}, 'Workers'), message, list);
  let history = null;  // worker id -> [{at, load, max_load, cpu_percent, memory_percent}]
  const historyChart = (id) => {
    const items = history && history[id];
    if (!items || items.length < 2) return null;
    const points = (f) => items.map((x) => ({ t: new Date(x.at).getTime(), v: f(x) }));
    return h('div', { class: 'worker-history' },
      svg(lineChart(points((x) => (x.max_load ? (100 * x.load) / x.max_load : 0)), { title: 'load, last hour', unit: '%', max: 100 })),
      svg(lineChart(points((x) => x.cpu_percent), { title: 'CPU, last hour', unit: '%', max: 100, color: '#d9822b' })));
  };
  let historyAvailable = true;
  view.every(HISTORY_MS, async () => {
    if (!historyAvailable) return;
    const q = new URLSearchParams({ since: new Date(Date.now() - HOUR_MS).toISOString().replace(/\.\d+Z$/, 'Z'),
                                    until: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
    try {
      history = (await get(`/api/v1/workers/load-history?${q}`, view.signal)).workers || {};
    } catch (e) {
      if (e.status === 404) historyAvailable = false;
    }
  });

  const load = async () => {
    let r;
    try { r = await get('/api/v1/workers', view.signal); } catch (e) {
      if (e.name !== 'AbortError') fill(list, problem(e, 'Workers'));
      return;
    }
    fill(list, r.items.length === 0 ? h('p', { class: 'muted' }, 'No workers registered') : r.items.map((w) => {
      const draining = w.status === 'draining';
      const toggle = async () => {
        fill(message);
        try { await api('POST', `/api/v1/workers/${encodeURIComponent(w.id)}/${draining ? 'undrain' : 'drain'}`); await load(); } catch (e) { fill(message, e.message); }
      };
      return h('div', { class: 'card worker', 'data-worker': w.id },
        h('div', { class: 'row spread' }, h('b', {}, w.id), badge(w.status)),
        meter('load', w.max_load ? w.load / w.max_load : 0, `${w.load}/${w.max_load}`),
        meter('cpu', (w.cpu_percent || 0) / 100, `${(w.cpu_percent || 0).toFixed(0)}%`),
        meter('memory', (w.memory_percent || 0) / 100, `${(w.memory_percent || 0).toFixed(0)}%`),
        h('div', {}, labels(w.labels)),
        h('div', { class: 'muted' }, `${w.protocol} · heartbeat ${time(w.last_heartbeat)}`),
        historyChart(w.id),
        h('button', { type: 'button', onclick: toggle }, draining ? 'Undrain' : 'Drain'));
    }));
  };
  view.every(POLL_MS, load);
}
