// Workers: load bars (load / max_load, CPU, memory), labels, status, and
// drain / undrain.
import { api, get } from './api.js';
import { h, fill, svg, labels, badge, time, problem } from './ui.js';
import { bar } from './charts.js';

const POLL_MS = 3000;

function meter(caption, fraction, text) {
  return h('div', { class: 'meter' }, h('span', { class: 'meter-label' }, caption), svg(bar(fraction, caption)),
    h('span', { class: 'meter-value' }, text));
}

export default function workers(view) {
  const list = h('div', { class: 'cards' });
  const message = h('p', { class: 'error' });
  fill(view.el, h('h1', {}, 'Workers'), message, list);
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
        h('button', { type: 'button', onclick: toggle }, draining ? 'Undrain' : 'Drain'));
    }));
  };
  view.every(POLL_MS, load);
}
