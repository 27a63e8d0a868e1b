// Cluster members (raft role, term, commit and applied index, reachable) and
// the audit log (GET /api/v1/audit: {items: [{at, subject, tenant, action,
// target, result, via, node}], next_cursor}; admins only).
import { get } from './api.js';
import { h, fill, time, problem } from './ui.js';

const POLL_MS = 3000;

export function cluster(view) {
  const box = h('div');
  fill(view.el, h('h1', {}, 'Cluster members'), box);
  view.every(POLL_MS, async () => {
    try {
      const c = await get('/api/v1/cluster', view.signal);
      fill(box, h('p', {}, `Leader: ${c.leader || 'none'} · term ${c.term} · this node: ${c.node_id}`),
        h('table', { id: 'members' },
          h('thead', {}, h('tr', {}, ['Member', 'Role', 'Term', 'Commit', 'Applied', 'Last log', 'HTTP', 'Reachable'].map((x) => h('th', {}, x)))),
          h('tbody', {}, c.members.map((m) => h('tr', {},
            h('td', {}, m.id, m.self ? h('span', { class: 'muted' }, ' (this node)') : null),
            h('td', {}, h('span', { class: `badge role-${m.role}` }, m.role)),
            h('td', {}, m.term ?? '—'), h('td', {}, m.commit_index ?? '—'), h('td', {}, m.applied_index ?? '—'),
            h('td', {}, m.last_log_index ?? '—'), h('td', { class: 'mono' }, m.http_addr || '—'),
            h('td', {}, h('span', { class: `dot ${m.reachable ? 'up' : 'down'}` }), m.reachable ? 'yes' : 'no'))))));
    } catch (e) { if (e.name !== 'AbortError') fill(box, problem(e, 'Cluster')); }
  });
}

export function audit(view) {
  const box = h('div');
  fill(view.el, h('h1', {}, 'Audit log'), box);
  view.every(5000, async () => {
    try {
      const r = await get('/api/v1/audit?limit=200', view.signal);
      const items = r.items;
      fill(box, items.length === 0 ? h('p', { class: 'muted' }, 'No entries') : h('table', { id: 'audit' },
        h('thead', {}, h('tr', {}, ['Time', 'Who', 'Tenant', 'Action', 'Target', 'Result', 'Via', 'Node'].map((x) => h('th', {}, x)))),
        h('tbody', {}, items.map((a) => h('tr', { 'data-action': a.action, 'data-target': a.target, 'data-result': a.result },
          h('td', {}, time(a.at)), h('td', {}, a.subject), h('td', {}, a.tenant),
          h('td', {}, a.action), h('td', { class: 'mono' }, a.target || '—'),
          h('td', {}, h('span', { class: `badge ${a.result === 'ok' ? 'state-success' : 'state-failed'}` }, a.result)),
          h('td', {}, a.via || '—'), h('td', { class: 'mono' }, a.node || '—'))))));
    } catch (e) { if (e.name !== 'AbortError') fill(box, problem(e, 'Audit log')); }
  });
}
