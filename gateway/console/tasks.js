// Tasks: the list (filters by name, labels, paused/active; pause, resume,
// trigger, delete) and the create/edit form with a live preview of the next
// fire times (GET /api/v1/schedules/next). Validation errors from the API are
// shown next to the field they name.
import { api, get, ApiError } from './api.js';
import { h, fill, labels, badge, time, problem, pager } from './ui.js';

const POLL_MS = 3000;

export function taskList(view) {
  const filters = h('form', { class: 'filters', id: 'task-filters' },
    h('input', { name: 'name', placeholder: 'name contains' }),
    h('input', { name: 'labels', placeholder: 'labels: zone=eu,gpu=true' }),
    h('select', { name: 'state' }, h('option', { value: '' }, 'all'),
      h('option', { value: 'active' }, 'active'), h('option', { value: 'paused' }, 'paused')),
    h('a', { class: 'button', href: '#/tasks/new', id: 'new-task' }, 'New task'));
  const message = h('p', { class: 'error' });
  const table = h('div');
  const pages = pager(() => load());
  fill(view.el, h('h1', {}, 'Tasks'), filters, message, table, pages.el);
  let shown = null;  // what the table shows: an unchanged poll leaves the DOM (and clicks) alone

  const load = async () => {
    const f = new FormData(filters);
    const q = new URLSearchParams({ limit: '50' });
    for (const k of ['name', 'labels', 'state']) if (f.get(k)) q.set(k, f.get(k));
    if (pages.cursor()) q.set('cursor', pages.cursor());
    let page;
    try {
      page = await get(`/api/v1/tasks?${q}`, view.signal);
    } catch (e) {
      if (e.name !== 'AbortError') fill(table, problem(e, 'Tasks'));
      shown = null;
      return;
    }
    pages.update(page.next_cursor);
    const key = JSON.stringify(page.items);
    if (key === shown) return;
    shown = key;
    fill(table, page.items.length === 0 ? h('p', { class: 'muted' }, 'No tasks') : h('table', { id: 'tasks' },
      h('thead', {}, h('tr', {}, ['ID', 'Name', 'Kind', 'Schedule', 'Labels', 'Status', 'Next fire', ''].map((x) => h('th', {}, x)))),
      h('tbody', {}, page.items.map((t) => h('tr', { 'data-task': t.name, 'data-id': t.id },
        h('td', {}, t.id),
        h('td', {}, h('a', { href: `#/tasks/${t.id}` }, t.name)),
        h('td', {}, t.kind),
        h('td', { class: 'mono' }, t.schedule || t.at || (t.event ? `event ${t.event}` : 'manual'), t.timezone && t.timezone !== 'UTC' ? ` (${t.timezone})` : ''),
        h('td', {}, labels(t.labels)),
        h('td', { class: 'status' }, badge(t.paused ? 'paused' : 'active')),
        h('td', {}, time((t.next_fire_times || [])[0])),
        h('td', { class: 'actions' }, actions(t, load, message)))))));
  };
  filters.addEventListener('input', () => { pages.reset(); load(); });
  filters.addEventListener('submit', (e) => { e.preventDefault(); load(); });
  view.every(POLL_MS, load);
}

function actions(t, reload, message) {
  const act = (label, run, cls) => h('button', { type: 'button', class: cls, onclick: async () => {
    fill(message);
    try { await run(); await reload(); } catch (e) { fill(message, `${label} ${t.name}: ${e.message}`); }
  } }, label);
  return [
    t.paused ? act('Resume', () => api('POST', `/api/v1/tasks/${t.id}/resume`))
             : act('Pause', () => api('POST', `/api/v1/tasks/${t.id}/pause`)),
    act('Trigger', () => api('POST', `/api/v1/tasks/${t.id}/trigger`)),
    h('a', { class: 'button', href: `#/tasks/${t.id}/edit` }, 'Edit'),
    act('Delete', async () => {
      if (!confirm(`Delete task ${t.name}?`)) return;
      await api('DELETE', `/api/v1/tasks/${t.id}`);
    }, 'danger'),
  ];
}

// -- form ---------------------------------------------------------------------

const field = (label, name, input, hint) => h('div', { class: 'field', 'data-field': name },
  h('label', { for: `f-${name}` }, label), input, hint ? h('small', { class: 'muted' }, hint) : null,
  h('div', { class: 'field-error' }));

const input = (name, attrs = {}) => h('input', { id: `f-${name}`, name, ...attrs });
const select = (name, options, value) => h('select', { id: `f-${name}`, name },
  options.map((o) => h('option', { value: o, selected: o === value }, o)));

function labelsText(obj) {
  return Object.entries(obj || {}).map(([k, v]) => `${k}=${v}`).join(',');
}

function parseLabels(text) {
  const out = {};
  for (const pair of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ApiError(400, 'invalid_argument', 'labels: KEY=VALUE pairs separated by commas', 'labels');
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/// The task document from the form's fields.
function readForm(form) {
  const f = Object.fromEntries(new FormData(form));
  const t = {
    name: f.name.trim(), kind: f.kind, schedule: f.schedule.trim(), timezone: f.timezone.trim() || 'UTC',
    labels: parseLabels(f.labels), timeout: f.timeout.trim() || '1h', overlap: f.overlap,
    shards: Number(f.shards || 1),
    retry: { policy: f.retry_policy, max_attempts: Number(f.max_attempts || 1) },
    max_runs: Number(f.max_runs || 0), max_concurrency: Number(f.max_concurrency || 0),
    pool: (f.pool || '').trim(), exclude_calendar: (f.exclude_calendar || '').trim(),
  };
  if (f.retry_policy === 'exponential') Object.assign(t.retry, { initial: f.retry_initial || '1s', max: f.retry_max || '10m' });
  else t.retry.interval = f.retry_initial || '1s';
  if (f.kind === 'http') t.http = { method: f.http_method, url: f.http_url.trim() };
  else t.command = f.command;
  return t;
}

export async function taskForm(view) {
  const id = view.params[0];
  // overlap: the API's default (allow), so a form left as it is makes the task a
  // POST without the field would.
  let t = { kind: 'shell', timezone: 'UTC', timeout: '1h', overlap: 'allow', shards: 1,
            retry: { policy: 'exponential', max_attempts: 1, initial: '1s', max: '10m' }, labels: {} };
  if (id) {
    try { t = await get(`/api/v1/tasks/${id}`, view.signal); } catch (e) { return fill(view.el, problem(e, `Task ${id}`)); }
  }
  const r = t.retry || {};
  const preview = h('ol', { class: 'preview', id: 'schedule-preview' });
  const formError = h('p', { class: 'error', id: 'form-error' });
  const form = h('form', { class: 'card task-form', id: 'task-form', novalidate: true },
    field('Name', 'name', input('name', { value: t.name || '', required: true })),
    field('Kind', 'kind', select('kind', ['shell', 'http'], t.kind)),
    field('Command', 'command', h('textarea', { id: 'f-command', name: 'command', rows: 2 }, t.command || '')),
    h('div', { class: 'http-only row' },
      field('HTTP method', 'http.method', select('http_method', ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], (t.http || {}).method || 'GET')),
      field('URL', 'http.url', input('http_url', { value: (t.http || {}).url || '', placeholder: 'https://…' }))),
    h('div', { class: 'row' },
      field('Schedule', 'schedule', input('schedule', { value: t.schedule || '', placeholder: '*/5 * * * *, @every 10s, @hourly' }), 'empty: manual only'),
      field('Time zone', 'timezone', input('timezone', { value: t.timezone || 'UTC' }))),
    h('div', { class: 'field' }, h('label', {}, 'Next fire times'), preview),
    field('Labels', 'labels', input('labels', { value: labelsText(t.labels), placeholder: 'zone=eu,team=data' })),
    h('div', { class: 'row' },
      field('Retry policy', 'retry.policy', select('retry_policy', ['exponential', 'fixed'], r.policy || 'exponential')),
      field('Max attempts', 'retry.max_attempts', input('max_attempts', { type: 'number', min: 1, value: r.max_attempts || 1 })),
      field('Initial / interval', 'retry.initial', input('retry_initial', { value: r.initial || r.interval || '1s' })),
      field('Max backoff', 'retry.max', input('retry_max', { value: r.max || '10m' }))),
    h('div', { class: 'row' },
      field('Timeout', 'timeout', input('timeout', { value: t.timeout || '1h' })),
      field('Overlap', 'overlap', select('overlap', ['allow', 'skip', 'buffer_one', 'buffer_all', 'replace'], t.overlap || 'allow'), 'default allow: slots fire while a run is active'),
      field('Shards', 'shards', input('shards', { type: 'number', min: 1, value: t.shards || 1 }))),
    h('div', { class: 'row' },
      field('Max runs', 'max_runs', input('max_runs', { type: 'number', min: 0, value: t.max_runs || 0 }), '0: the schedule never ends'),
      field('Max concurrency', 'max_concurrency', input('max_concurrency', { type: 'number', min: 0, value: t.max_concurrency || 0 }), '0: unbounded'),
      field('Pool', 'pool', input('pool', { value: t.pool || '', placeholder: 'db' }), 'shared limit, see /api/v1/pools'),
      field('Exclude calendar', 'exclude_calendar', input('exclude_calendar', { value: t.exclude_calendar || '', placeholder: 'holidays' }), 'dates the schedule skips')),
    formError,
    h('div', { class: 'row' }, h('button', { type: 'submit', id: 'save-task' }, id ? 'Save' : 'Create'),
      h('a', { class: 'button secondary', href: '#/tasks' }, 'Cancel')));
  fill(view.el, h('h1', {}, id ? `Edit task ${t.name}` : 'New task'), form);

  const kind = form.elements.kind;
  const showKind = () => {
    form.querySelector('.http-only').hidden = kind.value !== 'http';
    form.querySelector('[data-field="command"]').hidden = kind.value === 'http';
  };
  kind.addEventListener('change', showKind);
  showKind();

  let timer = null;
  const refreshPreview = async () => {
    const expr = form.elements.schedule.value.trim();
    if (!expr) return fill(preview, h('li', { class: 'muted' }, 'manual only'));
    const q = new URLSearchParams({ cron: expr, tz: form.elements.timezone.value.trim() || 'UTC', n: '5' });
    if (t.end_at) q.set('end_at', t.end_at);  // the preview stops where the task's window does
    const cal = form.elements.exclude_calendar.value.trim();
    if (cal) q.set('calendar', cal);  // and skips the dates of its exclusion calendar
    try {
      const r = await get(`/api/v1/schedules/next?${q}`, view.signal);
      fill(preview, r.times.map((x) => h('li', {}, time(x))));
    } catch (e) {
      if (e.name !== 'AbortError') fill(preview, h('li', { class: 'error' }, e.message));
    }
  };
  for (const n of ['schedule', 'timezone', 'exclude_calendar'])
    form.elements[n].addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(refreshPreview, 250); });
  refreshPreview();

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const e of form.querySelectorAll('.field-error')) fill(e);
    for (const e of form.querySelectorAll('.field.invalid')) e.classList.remove('invalid');
    fill(formError);
    try {
      const body = readForm(form);
      if (id) body.version = t.version;
      // PATCH: the form holds only some fields; PUT would reset the others to defaults.
      const saved = await api(id ? 'PATCH' : 'POST', id ? `/api/v1/tasks/${id}` : '/api/v1/tasks', body);
      view.go(`#/tasks/${saved.id}`);
    } catch (e) {
      const where = e.field && form.querySelector(`[data-field="${CSS.escape(e.field)}"]`);
      if (where) {
        where.classList.add('invalid');
        fill(where.querySelector('.field-error'), e.message);
      } else {
        fill(formError, e.status === 409 ? `${e.message} — reload to edit the latest version` : e.message);
      }
    }
  });
}
