// Secrets of the caller's tenant (GET /api/v1/secrets: {items: [{name, version,
// set_by, set_at}]}): names and who set them, never values, which no route
// answers. Values are set with `aischedctl secret set` (README "Secrets").
import { get } from './api.js';
import { h, fill, time, problem } from './ui.js';

export default function secrets(view) {
  const box = h('div');
  fill(view.el, h('h1', {}, 'Secrets'),
    h('p', { class: 'muted' }, 'Names only: values are write-only (aischedctl secret set NAME).'), box);
  view.every(5000, async () => {
    try {
      const r = await get('/api/v1/secrets', view.signal);
      fill(box, r.items.length === 0 ? h('p', { class: 'muted' }, 'No secrets') : h('table', { id: 'secrets' },
        h('thead', {}, h('tr', {}, ['Name', 'Version', 'Set by', 'Set at'].map((x) => h('th', {}, x)))),
        h('tbody', {}, r.items.map((s) => h('tr', { 'data-secret': s.name },
          h('td', { class: 'mono' }, s.name), h('td', {}, s.version ?? '—'),
          h('td', {}, s.set_by || '—'), h('td', {}, time(s.set_at)))))));
    } catch (e) { if (e.name !== 'AbortError') fill(box, problem(e, 'Secrets')); }
  });
}
