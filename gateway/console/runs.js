// A task's runs (state, attempt, duration, worker, exit code, with the
// analysis badge on failed runs) and one run's detail with its output, followed
// live (fetch streaming of GET /api/v1/instances/{id}/output?follow=true)
// while it runs.
import { api, get, stream } from './api.js';
import { h, fill, badge, time, duration, problem, pager } from './ui.js';

const POLL_MS = 2000;
const FAILED = new Set(['failed', 'timed_out']);
const RETRY_MISSING_MS = 30000;  // an analysis may be computed a little after the run failed
const analyses = new Map();  // instance id -> {value: analysis or null, at}

/// The analysis badge of a failed run, or nothing while there is none (404).
/// The answer: {instance_id, source, summary, severity, categories, root_cause,
/// fix, confidence, analyzed_at?, llm_error?, llm_not_configured?}.
async function analysisBadge(id, signal) {
  const known = analyses.get(id);
  if (!known || (known.value === null && Date.now() - known.at > RETRY_MISSING_MS)) {
    try {
      analyses.set(id, { value: await get(`/api/v1/instances/${encodeURIComponent(id)}/analysis`, signal), at: Date.now() });
    } catch (e) {
      if (e.name === 'AbortError') return null;
      analyses.set(id, { value: null, at: Date.now() });
    }
  }
  const a = analyses.get(id).value;
  if (!a) return null;
  return h('span', { class: `badge severity-${a.severity}`, title: `${a.summary || ''}\nroot cause: ${a.root_cause || '?'}\nfix: ${a.fix || '?'}` },
    `${a.severity} · ${a.categories.join(', ') || a.source}`);
}

export function taskRuns(view) {
  const id = view.params[0];
  const head = h('div');
  const table = h('div');
  const message = h('p', { class: 'error' });
  const pages = pager(() => load());
  fill(view.el, head, message, table, pages.el);
  let titled = false;
  const trigger = async () => {
    fill(message);
    try { await api('POST', `/api/v1/tasks/${id}/trigger`); } catch (e) { fill(message, `Trigger: ${e.message}`); }
  };
  const load = async () => {
    if (!titled) {
      try {
        const t = await get(`/api/v1/tasks/${id}`, view.signal);
        fill(head, h('h1', {}, `Runs of ${t.name}`), h('p', {},
          h('a', { class: 'button', href: `#/tasks/${id}/edit` }, 'Edit'), ' ',
          h('button', { type: 'button', onclick: trigger }, 'Trigger now'), ' ',
          h('span', { class: 'mono' }, t.schedule || 'manual')));
        titled = true;
      } catch (e) { return fill(head, problem(e, `Task ${id}`)); }
    }
    const cursor = pages.cursor() ? `&cursor=${encodeURIComponent(pages.cursor())}` : '';
    const page = await get(`/api/v1/instances?task_id=${id}&limit=50${cursor}`, view.signal);
    pages.update(page.next_cursor);
    const rows = await Promise.all(page.items.map(async (x) => h('tr', { 'data-instance': x.id, 'data-state': x.state },
      h('td', { class: 'mono' }, h('a', { href: `#/runs/${encodeURIComponent(x.id)}` }, x.id)),
      h('td', {}, badge(x.state), ' ', FAILED.has(x.state) ? await analysisBadge(x.id, view.signal) : null),
      h('td', {}, x.attempt), h('td', {}, duration(x.started_at, x.finished_at)),
      h('td', {}, x.worker_id || '—'), h('td', {}, x.exit_code ?? '—'), h('td', {}, time(x.created_at)))));
    fill(table, rows.length === 0 ? h('p', { class: 'muted' }, 'No runs yet') : h('table', { id: 'runs' },
      h('thead', {}, h('tr', {}, ['Run', 'State', 'Attempt', 'Duration', 'Worker', 'Exit', 'Created'].map((x) => h('th', {}, x)))),
      h('tbody', {}, rows)));
  };
  view.every(POLL_MS, load);
}

export async function runDetail(view) {
  const id = view.params[0];
  const info = h('div', { class: 'card' });
  const output = h('pre', { class: 'output', id: 'run-output' });
  const status = h('p', { class: 'muted', id: 'output-status' });
  fill(view.el, h('h1', {}, `Run ${id}`), info, h('h2', {}, 'Output'), status, output);
  let x;
  try { x = await get(`/api/v1/instances/${encodeURIComponent(id)}`, view.signal); } catch (e) { return fill(info, problem(e, `Run ${id}`)); }
  const analysis = FAILED.has(x.state) ? await analysisBadge(x.id, view.signal) : null;
  fill(info, h('dl', { class: 'grid' },
    h('dt', {}, 'Task'), h('dd', {}, h('a', { href: `#/tasks/${x.task_id}` }, x.task_id)),
    h('dt', {}, 'State'), h('dd', { id: 'run-state' }, badge(x.state), ' ', analysis),
    h('dt', {}, 'Attempt'), h('dd', {}, x.attempt),
    h('dt', {}, 'Shard'), h('dd', {}, `${x.shard + 1} of ${x.shards}`),
    h('dt', {}, 'Worker'), h('dd', {}, x.worker_id || '—'),
    h('dt', {}, 'Exit code'), h('dd', {}, x.exit_code ?? '—'),
    h('dt', {}, 'Started'), h('dd', {}, time(x.started_at)),
    h('dt', {}, 'Duration'), h('dd', {}, duration(x.started_at, x.finished_at)),
    x.error ? [h('dt', {}, 'Error'), h('dd', { class: 'error' }, x.error)] : null));
  if (analysis) {
    const a = analyses.get(x.id).value;
    info.append(h('div', { class: 'analysis' }, h('h3', {}, `Analysis (${a.source})`), h('p', {}, a.summary),
      h('p', {}, h('b', {}, 'Root cause: '), a.root_cause || '—'), h('p', {}, h('b', {}, 'Fix: '), a.fix || '—')));
  }
  fill(status, 'following live output…');
  try {
    await stream('GET', `/api/v1/instances/${encodeURIComponent(id)}/output?follow=true`, undefined, (name, data) => {
      if (name === 'end') {
        fill(status, `finished: ${data.state}${data.exit_code !== undefined ? `, exit code ${data.exit_code}` : ''}`);
        fill(view.el.querySelector('#run-state'), badge(data.state));
      } else if (name === 'error') {
        fill(status, data.message || 'error');
      } else if (data && data.chunk !== undefined) {
        output.append(data.chunk);
        output.scrollTop = output.scrollHeight;
      }
    }, view.signal);
  } catch (e) {
    if (e.name !== 'AbortError') fill(status, e.message);
  }
}
