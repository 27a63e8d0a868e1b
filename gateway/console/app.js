// The console's shell: hash routing to one page at a time, the login page
// (shown whenever the API answers 401), logout, and the page lifecycle — each
// page gets a view whose timers and requests stop when the user navigates away.
import { api, token, setToken, clearToken, ApiError } from './api.js';
import { h, fill } from './ui.js';
import overview from './overview.js';
import { taskList, taskForm } from './tasks.js';
import { taskRuns, runDetail } from './runs.js';
import dag from './dag.js';
import workers from './workers.js';
import { cluster, audit } from './cluster.js';
import chat from './chat.js';
import secrets from './secrets.js';

const routes = [
  [/^\/?$/, overview, 'Overview'],
  [/^\/tasks$/, taskList, 'Tasks'],
  [/^\/tasks\/new$/, taskForm, 'Tasks'],
  [/^\/tasks\/(\d+)\/edit$/, taskForm, 'Tasks'],
  [/^\/tasks\/(\d+)$/, taskRuns, 'Tasks'],
  [/^\/runs\/([^/]+)$/, runDetail, 'Tasks'],
  [/^\/dag$/, dag, 'DAG'],
  [/^\/workers$/, workers, 'Workers'],
  [/^\/cluster$/, cluster, 'Cluster'],
  [/^\/audit$/, audit, 'Audit'],
  [/^\/secrets$/, secrets, 'Secrets'],
  [/^\/chat$/, chat, 'AI chat'],
];

const main = document.getElementById('main');
let current = null;  // AbortController of the page on screen

/// What a page gets: its element, route parameters, an abort signal, a poller.
function makeView(params) {
  const ctl = new AbortController();
  const view = {
    el: main,
    params,
    signal: ctl.signal,
    /// Runs fn now and then `ms` after each run ends, until the page goes.
    every(ms, fn) {
      const tick = async () => {
        if (ctl.signal.aborted) return;
        try { await fn(); } catch (e) { if (!(e instanceof ApiError) && e.name !== 'AbortError') console.error(e); }
        if (!ctl.signal.aborted) setTimeout(tick, ms);
      };
      tick();
    },
    go(hash) { location.hash = hash; },
  };
  return [view, ctl];
}

function route() {
  if (current) current.abort();
  const path = decodeURIComponent(location.hash.replace(/^#/, '')) || '/';
  const hit = routes.find(([re]) => re.test(path));
  for (const a of document.querySelectorAll('#nav a'))
    a.classList.toggle('active', !!hit && a.textContent === hit[2]);
  if (!hit) return fill(main, h('h1', {}, 'Not found'), h('p', {}, `No page ${path}`));
  const [view, ctl] = makeView(path.match(hit[0]).slice(1));
  current = ctl;
  fill(main);
  hit[1](view);
}

function loginPage() {
  if (document.getElementById('login-form')) return;  // several 401s arrive at once
  if (current) current.abort();
  current = null;
  const error = h('p', { class: 'error', id: 'login-error' });
  const form = h('form', { class: 'card login', id: 'login-form' },
    h('h1', {}, 'Sign in to aisched'),
    h('label', {}, 'Username', h('input', { name: 'username', autocomplete: 'username', required: true })),
    h('label', {}, 'Password', h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true })),
    h('button', { type: 'submit' }, 'Sign in'), error);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    try {
      const r = await api('POST', '/api/v1/auth/login', { username: data.username, password: data.password });
      setToken(r.token);  // the answer: {token, expires_at, role, tenant}
      await showWhoami();
      route();
    } catch (e) {
      fill(error, e.status === 401 ? 'Wrong username or password' : e.message);
    }
  });
  fill(main, form);
}

/// GET /api/v1/auth/whoami answers {subject, tenant, role, authenticated,
/// auth_enabled}; with auth on and no token it is a 401 (the login page).
async function showWhoami() {
  const who = document.getElementById('whoami');
  try {
    const p = await api('GET', '/api/v1/auth/whoami');
    document.getElementById('logout').hidden = !p.auth_enabled;
    fill(who, p.auth_enabled ? `${p.subject} · ${p.role} · ${p.tenant}` : 'auth off');
  } catch (_) {
    document.getElementById('logout').hidden = true;
    fill(who);
  }
}

document.getElementById('logout').addEventListener('click', () => {
  clearToken();
  document.getElementById('logout').hidden = true;
  fill(document.getElementById('whoami'));
  loginPage();
});
window.addEventListener('aisched:unauthenticated', loginPage);
window.addEventListener('hashchange', route);
showWhoami();
route();
