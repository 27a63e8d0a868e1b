// Small DOM and formatting helpers shared by the console's pages.

/// h('div', {class: 'x', onclick: fn}, 'text', child, [more]) builds an element.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/// Replaces the children of `el`.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/// An SVG fragment (trusted markup built by charts.js) as an element.
export function svg(markup) {
  const t = document.createElement('template');
  t.innerHTML = markup.trim();
  return t.content.firstElementChild;
}

export const esc = (s) => String(s).replace(/[&<>"']/g,
  (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

export function badge(state) {
  return h('span', { class: `badge state-${state || 'none'}` }, state || '—');
}

export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}

export function duration(from, to) {
  if (!from || !to) return '—';
  const ms = new Date(to) - new Date(from);
  if (!(ms >= 0)) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} m ${Math.round((ms % 60000) / 1000)} s`;
}

export const labels = (obj) =>
  Object.entries(obj || {}).map(([k, v]) => h('span', { class: 'label' }, `${k}=${v}`));

/// A message line for a failed load: "not available" for 404, else the error.
export function problem(err, what) {
  if (err && err.status === 404) return h('p', { class: 'muted' }, `${what} not available`);
  return h('p', { class: 'error' }, `${what}: ${err && err.message ? err.message : err}`);
}

/// Cursor paging for `{items, next_cursor}` lists: the cursor of the page on
/// screen, and Previous / Next buttons that call `changed()` after moving.
export function pager(changed) {
  const stack = [];  // cursors of the pages before this one
  let cursor = '', next = '';
  const prev = h('button', { type: 'button', class: 'secondary', onclick: () => { cursor = stack.pop() || ''; changed(); } }, '‹ Previous');
  const fwd = h('button', { type: 'button', class: 'secondary', onclick: () => { stack.push(cursor); cursor = next; changed(); } }, 'Next ›');
  const el = h('div', { class: 'pager row' }, prev, fwd);
  return {
    el,
    cursor: () => cursor,
    reset() { stack.length = 0; cursor = ''; },
    /// Called with each loaded page's next_cursor.
    update(nextCursor) {
      next = nextCursor || '';
      prev.hidden = stack.length === 0;
      fwd.hidden = !next;
    },
  };
}
