// Drives the web console of a running aisched node in headless Chromium
// (playwright-core, Debian's /usr/bin/chromium), with no script error on any page:
// - a task created through the form (shell `echo hi`, `@every 1s`; an empty name
//   first, which the API refuses by naming the field) shows successful runs; a
//   run's output shows "hi"; a running run's output arrives live; the overview
//   charts move; pausing it in the list is what the API then reports; an edit
//   with a bad time zone names the field, a good one saves;
// - against a real second node with --auth (--auth-url, --admin-password): the
//   console shows the login page, a wrong password is refused, the admin signs
//   in (whoami in the header), a task created through the form shows up as an
//   ok "task.create" of that task id in the audit page next to the refused
//   login; the AI chat (scripted LLM, tests/support/scripted_llm.py) streams a
//   tool call and an answer, a delete waits for Confirm, runs, and is audited
//   with via ai-agent; a create_task and a pause_task in two tool rounds show
//   ok cards and the answer, and the API then has task "from-chat" paused;
//   the conversation is listed and its history reloads;
//   logout shows the login page again;
// - against routes mocked in the browser, with the real routes' shapes (login as
//   a non-admin, chat events including a confirmation, an earlier
//   conversation's messages, load history, which the node samples only
//   every 30 s, and a DAG of 40 unrelated tasks beside a chain and a diamond):
//   a 401 shows the login page and the token is sent afterwards; the chat
//   renders, each tool call's arguments and result folded under a one-line
//   summary that opens on a click; the DAG draws the connected tasks on
//   screen, largest component first, and folds the unrelated ones into a list
//   that stays open across polls once opened; worker load history shows; a
//   failed run shows the real analysis badge (rule engine, not mocked); logout.
// Screenshots go to --artifacts (console.png, console-overview.png,
// console-chat.png, console-dag.png, console-audit.png, console-chat-real.png).
//
//   node console.spec.mjs --url http://127.0.0.1:PORT --auth-url http://127.0.0.1:PORT2
//        --admin-password PW --modules DIR --artifacts DIR [--chromium PATH]
// Exit codes: 0 passed, 1 failed, 77 Chromium cannot start here (the caller skips).
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const base = args.url;
const chromiumPath = args.chromium || '/usr/bin/chromium';
const artifacts = args.artifacts;
const require = createRequire(path.join(args.modules, 'package.json'));
const { chromium } = require('playwright-core');

const TASK = `e2e-hello-${process.pid}`;
const step = (s) => console.log(`[console e2e] ${s}`);
const errors = [];  // uncaught script errors and console errors, from every page

/// 40 unrelated tasks (ids 1-40, before the others, as on a busy node), a chain
/// of three and a diamond of four.
const mockedDag = (() => {
  const node = (id, name) => ({ id, name, paused: false, last_slot: null, last_state: 'success', waiting_for: [] });
  const nodes = Array.from({ length: 40 }, (_, i) => node(i + 1, `lonely-${i + 1}`));
  ['chain-a', 'chain-b', 'chain-c', 'diamond-top', 'diamond-left', 'diamond-right', 'diamond-bottom']
    .forEach((name, i) => nodes.push(node(41 + i, name)));
  const edges = [[41, 42], [42, 43], [44, 45], [44, 46], [45, 47], [46, 47]].map(([from, to]) => ({ from, to }));
  return { nodes, edges };
})();

const sse = (events) => events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');

/// Login and the AI chat against routes mocked in the browser (the auth and AI
/// routes are other branches' work; the console must already speak their contract).
async function mockedAuthAndChat(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (e) => errors.push(`page error (mocked): ${e.message}`));
  const seen = { bearer: 0, confirm: null, chat: null, dag: 0 };
  const workerIds = (await (await fetch(`${base}/api/v1/workers`)).json()).items.map((w) => w.id);
  await page.route('**/api/v1/**', async (route) => {
    const req = route.request();
    const url = new URL(req.url());
    const auth = req.headers().authorization || '';
    const json = (status, body) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
    if (url.pathname === '/api/v1/auth/login') {
      const b = req.postDataJSON();
      if (b.username === 'alice' && b.password === 'secret')
        return json(200, { token: 'test-token', expires_at: '2099-01-01T00:00:00Z', role: 'operator', tenant: 'default' });
      return json(401, { error: { code: 'unauthenticated', message: 'bad credentials', field: '' } });
    }
    if (auth !== 'Bearer test-token') return json(401, { error: { code: 'unauthenticated', message: 'token required', field: '' } });
    seen.bearer++;
    if (url.pathname === '/api/v1/auth/whoami')
      return json(200, { subject: 'alice', tenant: 'default', role: 'operator', authenticated: true, auth_enabled: true });
    if (url.pathname === '/api/v1/ai/conversations')
      return json(200, { items: [{ id: 'c1', tenant: 'default', subject: 'alice', title: 'earlier chat',
        created_at: '2026-11-30T09:00:00Z', updated_at: '2026-11-30T10:00:00Z', messages: 2 }] });
    if (url.pathname === '/api/v1/ai/conversations/c1/messages')
      return json(200, { conversation_id: 'c1', items: [
        { role: 'user', content: 'what failed today?', seq: 0, at: '2026-11-30T09:00:00Z' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1_0', name: 'list_runs', arguments: '{"state":"failed"}' }], seq: 1, at: '2026-11-30T09:00:01Z' },
        { role: 'tool', content: '{"items":[]}', tool_call_id: 'call_1_0', name: 'list_runs', seq: 2, at: '2026-11-30T09:00:02Z' },
        { role: 'assistant', content: 'Nothing failed today.', seq: 3, at: '2026-11-30T09:00:03Z' }] });
    if (url.pathname === '/api/v1/ai/chat') {
      seen.chat = req.postDataJSON();
      return route.fulfill({ status: 200, contentType: 'text/event-stream', body: sse([
        ['conversation_id', { conversation_id: 'c1' }],
        ['text', { delta: 'Pausing the ' }], ['text', { delta: 'eu tasks.' }],
        ['tool_call', { id: 't1', name: 'pause_task', arguments: '{"task_id":7}' }],
        ['tool_result', { id: 't1', name: 'pause_task', ok: true, result: { paused: true } }],
        ['tool_call', { id: 't2', name: 'delete_task', arguments: '{"task_id":9}' }],
        ['confirmation_required', { action_id: 'a1-t2', name: 'delete_task', arguments: '{"task_id":9}', summary: 'Delete task 9 (db-old)' }],
        ['done', { conversation_id: 'c1', rounds: 2 }]]) });
    }
    if (url.pathname === '/api/v1/ai/confirm') {
      seen.confirm = req.postDataJSON();
      return route.fulfill({ status: 200, contentType: 'text/event-stream', body: sse([
        ['tool_result', { id: 'a1-t2', name: 'delete_task', ok: true, result: {} }],
        ['text', { delta: 'Deleted task 9.' }], ['done', { conversation_id: 'c1', rounds: 3 }]]) });
    }
    if (url.pathname === '/api/v1/dag') {
      seen.dag++;
      return json(200, mockedDag);
    }
    if (url.pathname === '/api/v1/workers/load-history') {
      const at = (ago) => new Date(Date.now() - ago * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
      const items = [90, 60, 30, 0].map((ago, i) => ({ at: at(ago), load: i, max_load: 4, cpu_percent: 10 * i, memory_percent: 20 }));
      return json(200, { workers: Object.fromEntries(workerIds.map((id) => [id, items])) });
    }
    return route.continue();
  });

  step('a 401 shows the login page; signing in sends the bearer token');
  await page.goto(`${base}/#/tasks`);
  await page.locator('#login-form').waitFor();
  await page.fill('input[name=username]', 'alice');
  await page.fill('input[name=password]', 'wrong');
  await page.click('#login-form button[type=submit]');
  await page.locator('#login-error', { hasText: 'Wrong' }).waitFor();
  await page.fill('input[name=password]', 'secret');
  await page.click('#login-form button[type=submit]');
  await page.locator('#tasks, main p.muted').first().waitFor();
  await page.locator('#whoami', { hasText: 'alice' }).waitFor();
  if (seen.bearer === 0) throw new Error('no API call carried the bearer token');

  step('the AI chat renders text, tool cards and a confirmation');
  await page.goto(`${base}/#/chat`);
  await page.locator('#conversations li[data-conversation="c1"]', { hasText: 'earlier chat' }).waitFor();
  await page.click('#conversations li[data-conversation="c1"] a');
  await page.locator('.tool-card[data-tool="list_runs"]', { hasText: 'failed' }).waitFor();
  await page.locator('.msg.assistant', { hasText: 'Nothing failed today.' }).waitFor();
  // The stored call and its result share one card, both folded under their summaries.
  const listRuns = page.locator('.tool-card.ok[data-tool="list_runs"]');
  await listRuns.locator('details.tool-args:not([open]) > summary', { hasText: 'state: failed' }).waitFor();
  await listRuns.locator('details.tool-json:not([open]) > summary', { hasText: '0 items' }).waitFor();
  await page.click('text=New conversation');
  await page.fill('#chat-form textarea', 'pause everything tagged zone=eu');
  await page.press('#chat-form textarea', 'Enter');
  await page.locator('.msg.assistant', { hasText: 'Pausing the eu tasks.' }).waitFor();
  await page.locator('.tool-card.ok[data-tool="pause_task"]', { hasText: 'paused' }).waitFor();
  await page.locator('.tool-card[data-tool="delete_task"]', { hasText: 'awaiting confirmation' }).waitFor();

  step('tool calls and results are folded under a one-line summary');
  const folds = await page.locator('.tool-card:not(.confirm) pre:visible').count();
  if (folds !== 0) throw new Error(`${folds} tool arguments or results are shown unfolded`);
  const paused = page.locator('.tool-card.ok[data-tool="pause_task"] details.tool-json');
  if (await paused.evaluate((d) => d.open)) throw new Error('the pause_task result is open');
  await paused.locator('summary', { hasText: 'paused: true' }).waitFor();
  await paused.locator('summary .badge.state-success', { hasText: 'ok' }).waitFor();
  const summaryBox = await paused.locator('summary').boundingBox();
  if (summaryBox.height > 30) throw new Error(`the summary takes ${summaryBox.height}px, not one line`);
  await paused.locator('summary').click();
  await paused.locator('pre', { hasText: '"paused": true' }).waitFor();
  await page.locator('.tool-card[data-tool="pause_task"] details.tool-args > summary', { hasText: 'task_id: 7' }).waitFor();
  // The confirmation alone shows its arguments: the user decides on them.
  await page.locator('.tool-card.confirm pre', { hasText: '"task_id": 9' }).waitFor();
  const summaries = await page.evaluate(async () => {
    const { summarize } = await import('/console/chat.js');
    return [summarize({ items: [1, 2], next_cursor: 'c' }), summarize({ error: { code: 'not_found', message: 'task 9 not found' } }),
      summarize({}), summarize({ text: 'x'.repeat(300) }).length];
  });
  if (JSON.stringify(summaries) !== JSON.stringify(['2 items (more)', 'not_found: task 9 not found', '(empty)', 100]))
    throw new Error(`summaries: ${JSON.stringify(summaries)}`);

  const confirmCard = page.locator('.tool-card.confirm', { hasText: 'Delete task 9' });
  await confirmCard.locator('button', { hasText: 'Confirm' }).click();
  await page.locator('.msg.assistant', { hasText: 'Deleted task 9.' }).waitFor();
  if (seen.chat.message !== 'pause everything tagged zone=eu') throw new Error(`chat body: ${JSON.stringify(seen.chat)}`);
  if (JSON.stringify(seen.confirm) !== JSON.stringify({ conversation_id: 'c1', action_id: 'a1-t2', approve: true }))
    throw new Error(`confirm body: ${JSON.stringify(seen.confirm)}`);
  await page.screenshot({ path: path.join(artifacts, 'console-chat.png'), fullPage: true });

  step('the DAG lays out the connected tasks on screen and folds the unrelated ones');
  await page.goto(`${base}/#/dag`);
  await page.locator('svg.dag g.dag-node[data-task="chain-c"]').waitFor();
  const drawn = await page.locator('svg.dag g.dag-node').count();
  if (drawn !== 7) throw new Error(`the DAG draws ${drawn} nodes, not the 7 with edges`);
  if (await page.locator('svg.dag path.edge').count() !== 6) throw new Error('the DAG does not draw the 6 edges');
  for (const name of ['chain-a', 'chain-b', 'chain-c', 'diamond-top', 'diamond-left', 'diamond-right', 'diamond-bottom']) {
    const box = await page.locator(`svg.dag g.dag-node[data-task="${name}"]`).boundingBox();
    if (!box || box.y < 0 || box.y + box.height > 860 || box.x + box.width > 1280)
      throw new Error(`${name} is off-screen: ${JSON.stringify(box)}`);
  }
  const top = async (name) => (await page.locator(`svg.dag g.dag-node[data-task="${name}"]`).boundingBox()).y;
  if (!(await top('diamond-top') < await top('chain-a'))) throw new Error('the larger component (the diamond) is not first');
  const isolated = page.locator('details#dag-isolated');
  await isolated.locator('summary', { hasText: '40 tasks without dependencies' }).waitFor();
  if (await isolated.evaluate((d) => d.open)) throw new Error('the unrelated tasks are not folded');
  if (await page.locator('#dag-isolated .dag-chip[data-task="lonely-1"]').isVisible()) throw new Error('lonely-1 shows while folded');
  await isolated.locator('summary').click();
  await page.locator('#dag-isolated .dag-chip[data-task="lonely-40"]').waitFor();
  const polls = seen.dag;
  for (let waited = 0; seen.dag === polls && waited < 12_000; waited += 250) await page.waitForTimeout(250);
  if (seen.dag === polls) throw new Error('the DAG page did not poll again');
  await page.waitForTimeout(300);  // the poll's answer is drawn
  if (!(await page.locator('details#dag-isolated').evaluate((d) => d.open))) throw new Error('the list folded again on the next poll');
  const laidOut = await page.evaluate(async (d) => {
    const { layout } = await import('/console/dag.js');
    const l = layout(d.nodes, d.edges);
    return [l.components, l.isolated.length, l.lanes, l.bands.length];
  }, mockedDag);
  if (JSON.stringify(laidOut) !== JSON.stringify([2, 40, 3, 1])) throw new Error(`layout: ${JSON.stringify(laidOut)}`);
  await page.screenshot({ path: path.join(artifacts, 'console-dag.png'), fullPage: true });

  step('workers show their load history');
  await page.goto(`${base}/#/workers`);
  await page.locator('.worker .worker-history svg.chart').first().waitFor();

  step('a failed run shows its analysis badge (the real rule engine\'s)');
  const created = await fetch(`${base}/api/v1/tasks`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: `e2e-fails-${process.pid}`, kind: 'shell', command: 'exit 127',
      retry: { policy: 'fixed', max_attempts: 1, interval: '1s' } }) });
  if (created.status !== 201) throw new Error(`create of a failing task: ${created.status} ${await created.text()}`);
  const failing = await created.json();
  await fetch(`${base}/api/v1/tasks/${failing.id}/trigger`, { method: 'POST' });
  await page.goto(`${base}/#/tasks/${failing.id}`);
  await page.locator('#runs tr[data-state="failed"] .severity-high', { hasText: 'command_not_found' }).waitFor({ timeout: 30_000 });

  step('logging out shows the login page');
  await page.click('#logout');
  await page.locator('#login-form').waitFor();
  if (await page.evaluate(() => sessionStorage.getItem('aisched.token'))) throw new Error('token kept after logout');
  await context.close();
}

/// Login and the audit log against a real node started with --auth: the admin
/// signs in through the login page, creates a task through the form, and finds
/// its creation (and the refused login before it) in the audit page.
async function realAuthAndAudit(browser) {
  const authBase = args['auth-url'];
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (e) => errors.push(`page error (auth node): ${e.message}`));

  step('auth node: the console shows the login page; a wrong password is refused');
  const anonymous = await fetch(`${authBase}/api/v1/tasks`);
  if (anonymous.status !== 401) throw new Error(`the auth node answered ${anonymous.status} without a token`);
  await page.goto(`${authBase}/#/tasks`);
  await page.locator('#login-form').waitFor();
  await page.fill('input[name=username]', 'admin');
  await page.fill('input[name=password]', 'wrong-password');
  await page.click('#login-form button[type=submit]');
  await page.locator('#login-error', { hasText: 'Wrong username or password' }).waitFor();

  step('auth node: the admin signs in');
  await page.fill('input[name=password]', args['admin-password']);
  await page.click('#login-form button[type=submit]');
  await page.locator('#whoami', { hasText: 'admin · cluster_admin · default' }).waitFor();
  await page.locator('#tasks, main p.muted').first().waitFor();
  if (await page.isHidden('#logout')) throw new Error('no logout button with auth on');

  step('auth node: a task created through the form appears in the audit page');
  await page.goto(`${authBase}/#/tasks/new`);
  await page.locator('#task-form').waitFor();
  await page.fill('#f-name', `e2e-audited-${process.pid}`);
  await page.fill('#f-command', 'echo audited');
  await page.click('#save-task');
  await page.waitForURL(/#\/tasks\/\d+$/);
  const taskId = page.url().match(/#\/tasks\/(\d+)$/)[1];
  await page.goto(`${authBase}/#/audit`);
  // The recorder batches entries through raft; the page polls every 5 s.
  const created = page.locator(`#audit tr[data-action="task.create"][data-target="${taskId}"][data-result="ok"]`);
  await created.waitFor({ timeout: 30_000 });
  const text = await created.textContent();
  if (!/admin/.test(text) || !/default/.test(text)) throw new Error(`audit row without subject or tenant: ${text}`);
  await page.locator('#audit tr[data-action="auth.login"][data-target="admin"][data-result="unauthenticated"]').first().waitFor();
  await page.locator('#audit tr[data-action="auth.login"][data-target="admin"][data-result="ok"]').first().waitFor();
  await page.screenshot({ path: path.join(artifacts, 'console-audit.png'), fullPage: true });

  step('auth node: the AI chat (scripted LLM) streams a tool call and an answer');
  if (taskId !== '1') throw new Error(`the scripted LLM deletes task 1, the form created task ${taskId}`);
  await page.goto(`${authBase}/#/chat`);
  await page.fill('#chat-form textarea', 'how many workers are online?');
  await page.press('#chat-form textarea', 'Enter');
  await page.locator('.tool-card.ok[data-tool="query_workers"]').waitFor();
  await page.locator('.msg.assistant', { hasText: 'One worker is online.' }).waitFor();

  step('auth node: a delete waits for Confirm, then runs');
  await page.locator('#chat-form button[type=submit]:not([disabled])').waitFor();
  await page.fill('#chat-form textarea', 'delete task 1');
  await page.press('#chat-form textarea', 'Enter');
  const confirmCard = page.locator('.tool-card.confirm', { hasText: 'delete_task' });
  await confirmCard.waitFor();
  await page.locator('.tool-card[data-tool="delete_task"]', { hasText: 'awaiting confirmation' }).waitFor();
  if ((await fetch(`${authBase}/api/v1/tasks/1`, { headers: { Authorization: `Bearer ${await page.evaluate(() => sessionStorage.getItem('aisched.token'))}` } })).status !== 200)
    throw new Error('task 1 is gone before the confirmation');
  await confirmCard.locator('button', { hasText: 'Confirm' }).click();
  await page.locator('.tool-card.ok[data-tool="delete_task"]').waitFor();
  await page.locator('.msg.assistant', { hasText: 'Deleted task 1.' }).waitFor();

  step('auth node: the chat creates a task and pauses it in two tool rounds');
  await page.locator('#chat-form button[type=submit]:not([disabled])').waitFor();
  await page.fill('#chat-form textarea', 'create a noop task from-chat every hour and pause it');
  await page.press('#chat-form textarea', 'Enter');
  await page.locator('.tool-card.ok[data-tool="create_task"]', { hasText: 'from-chat' }).waitFor();
  await page.locator('.tool-card.ok[data-tool="pause_task"] .badge.state-success').waitFor();
  await page.locator('.msg.assistant', { hasText: 'Created from-chat and paused it.' }).waitFor();
  const adminToken = await page.evaluate(() => sessionStorage.getItem('aisched.token'));
  const listed = await (await fetch(`${authBase}/api/v1/tasks?name=from-chat`,
    { headers: { Authorization: `Bearer ${adminToken}` } })).json();
  const fromChat = (listed.items || []).filter((t) => t.name === 'from-chat');
  if (fromChat.length !== 1 || fromChat[0].id !== 2 || fromChat[0].paused !== true || fromChat[0].kind !== 'noop')
    throw new Error(`the API does not show task 2 "from-chat" paused: ${JSON.stringify(listed)}`);
  await page.screenshot({ path: path.join(artifacts, 'console-chat-real.png'), fullPage: true });

  step('auth node: the delete is audited as the agent\'s; the conversation\'s history reloads');
  await page.goto(`${authBase}/#/audit`);
  await page.locator('#audit tr[data-action="task.delete"][data-target="1"][data-result="ok"]', { hasText: 'ai-agent' })
    .waitFor({ timeout: 30_000 });
  await page.goto(`${authBase}/#/chat`);
  const conv = page.locator('#conversations li', { hasText: 'how many workers are online?' });
  await conv.locator('a').click();
  await page.locator('.msg.user', { hasText: 'delete task 1' }).waitFor();
  await page.locator('.tool-card[data-tool="query_workers"]').first().waitFor();
  await page.locator('.msg.assistant', { hasText: 'Deleted task 1.' }).waitFor();

  step('auth node: logging out shows the login page');
  await page.click('#logout');
  await page.locator('#login-form').waitFor();
  await context.close();
}

let browser;
try {
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'], timeout: 60_000 });
} catch (e) {
  console.error('!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!');
  console.error(`!!! Chromium cannot start (${chromiumPath}): the console browser test is SKIPPED`);
  console.error(`!!! ${e.message.split('\n')[0]}`);
  console.error('!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!');
  process.exit(77);
}

let page;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`); });

  step('overview renders with cluster health and charts');
  await page.goto(`${base}/`);
  await page.locator('#health').waitFor();
  await page.locator('svg.chart').first().waitFor();

  step('the form shows the schedule preview and names the invalid field');
  await page.goto(`${base}/#/tasks/new`);
  await page.locator('#task-form').waitFor();
  await page.fill('#f-command', 'echo hi');
  await page.fill('#f-schedule', '@every 1s');
  await page.locator('#schedule-preview li').nth(4).waitFor();
  await page.click('#save-task');  // name still empty: the API answers 400 for field "name"
  await page.locator('[data-field="name"] .field-error', { hasText: 'name' }).waitFor();
  await page.fill('#f-name', TASK);
  await page.click('#save-task');

  step('runs of the new task appear with state success');
  await page.waitForURL(/#\/tasks\/\d+$/);
  const taskId = page.url().match(/#\/tasks\/(\d+)$/)[1];
  const success = page.locator('#runs tr[data-state="success"]').first();
  await success.waitFor({ timeout: 30_000 });

  step('a run shows its output');
  await success.locator('a').click();
  await page.locator('#run-output', { hasText: 'hi' }).waitFor();
  await page.locator('#output-status', { hasText: 'finished: success' }).waitFor();

  step('a running run\'s output is followed live');
  const slow = await (await fetch(`${base}/api/v1/tasks`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: `e2e-slow-${process.pid}`, kind: 'shell',
      command: 'for i in $(seq 1 20); do echo line$i; sleep 1; done' }) })).json();
  const fired = await (await fetch(`${base}/api/v1/tasks/${slow.id}/trigger`, { method: 'POST' })).json();
  await page.goto(`${base}/#/runs/${encodeURIComponent(fired.instances[0].id)}`);
  await page.locator('#run-output', { hasText: 'line2' }).waitFor({ timeout: 15_000 });
  // Seen before the run ended (20 s): the stream delivers output while it runs.
  if (/line20/.test(await page.textContent('#run-output'))) throw new Error('output arrived only at the end');
  await page.locator('#output-status', { hasText: 'following' }).waitFor({ timeout: 1000 });

  step('the overview charts show the runs');
  await page.goto(`${base}/`);
  // Three /metrics samples (two intervals) while the task runs every second.
  await page.waitForFunction(
    () => (document.querySelector('svg.chart path')?.getAttribute('d') || '').split('L').length >= 3,
    undefined, { timeout: 30_000 });
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'console-overview.png'), fullPage: true });

  step('pausing in the task list');
  await page.goto(`${base}/#/tasks`);
  await page.fill('#task-filters input[name=name]', TASK);  // the name filter finds it on any page
  await page.locator('#tasks tbody tr').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('#tasks tbody tr').length === 1);
  const row = page.locator(`#tasks tr[data-task="${TASK}"]`);
  await row.locator('button', { hasText: 'Pause' }).click();
  await row.locator('.status', { hasText: 'paused' }).waitFor();
  const t = await (await fetch(`${base}/api/v1/tasks/${taskId}`)).json();
  if (t.paused !== true) throw new Error(`the API says task ${taskId} is not paused: ${JSON.stringify(t)}`);

  step('editing names the invalid field, then saves');
  await page.goto(`${base}/#/tasks/${taskId}/edit`);
  await page.locator('#f-name').waitFor();
  await page.fill('#f-timezone', 'Mars/Olympus_Mons');
  await page.locator('#schedule-preview li.error').waitFor();
  await page.click('#save-task');
  await page.locator('[data-field="timezone"] .field-error', { hasText: 'Mars/Olympus_Mons' }).waitFor();
  await page.fill('#f-timezone', 'Europe/Berlin');
  await page.click('#save-task');
  await page.waitForURL(new RegExp(`#/tasks/${taskId}$`));
  const edited = await (await fetch(`${base}/api/v1/tasks/${taskId}`)).json();
  if (edited.timezone !== 'Europe/Berlin' || edited.paused !== true || edited.command !== 'echo hi')
    throw new Error(`the edit did not save as expected: ${JSON.stringify(edited)}`);

  step('the other pages render');
  // TASK has no dependencies: the DAG lists it among the unrelated tasks (open: there is no graph).
  for (const [hash, sel] of [['#/dag', `#dag-isolated .dag-chip[data-task="${TASK}"]`], ['#/workers', '.worker'],
    ['#/cluster', '#members tbody tr'], ['#/audit', 'main h1'], ['#/chat', '#chat-form']]) {
    await page.goto(`${base}/${hash}`);
    await page.locator(sel).first().waitFor();
  }

  step('screenshot');
  await page.goto(`${base}/#/tasks/${taskId}`);
  await page.locator('#runs tr[data-state="success"]').first().waitFor();
  await page.screenshot({ path: path.join(artifacts, 'console.png'), fullPage: true });

  await realAuthAndAudit(browser);
  await mockedAuthAndChat(browser);

  if (errors.length) throw new Error(`script errors in the console:\n${errors.join('\n')}`);
  step(`passed (task ${taskId})`);
  console.log(`TASK_ID=${taskId}`);
  await browser.close();
  process.exit(0);
} catch (e) {
  console.error(`[console e2e] FAILED: ${e.stack || e}`);
  if (errors.length) console.error(errors.join('\n'));
  if (page && artifacts) {
    try {
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: path.join(artifacts, 'console-failure.png'), fullPage: true });
      console.error(`[console e2e] screenshot of the failure: ${path.join(artifacts, 'console-failure.png')}`);
    } catch (_) { /* the page may be gone */ }
  }
  await browser.close();
  process.exit(1);
}
