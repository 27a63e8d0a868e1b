// AI chat: the conversation list, and a message box that POSTs
// /api/v1/ai/chat and renders the Server-Sent Events as they arrive — text
// deltas, tool-call cards (name, arguments, then the result), and a
// confirm/cancel card for a destructive call (POST /api/v1/ai/confirm, which
// answers with the same stream). Events (gateway/ai_routes.cpp, llm_agent):
// conversation_id {conversation_id}, text {delta}, tool_call {id, name,
// arguments}, tool_result {id, name, ok, result}, confirmation_required
// {action_id, name, arguments, summary}, done {conversation_id, rounds}, error
// {code, message}; `arguments` is the model's JSON text, `result` JSON. A
// destructive call comes as tool_call, then confirmation_required (its
// action_id ends with the call's id), and its tool_result only in the confirm
// stream. "AI agent not available" when the node has no LLM (503
// llm_not_configured) or no AI routes (404). A tool call's arguments and its
// result are folded (<details>) under a one-line summary; only a confirmation
// shows its arguments unfolded, since the user decides on them.
import { get, stream } from './api.js';
import { h, fill, time } from './ui.js';

let conversationId = null;  // kept across visits

const parsed = (text) => { try { return JSON.parse(text); } catch (_) { return text; } };
const pretty = (v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

const SUMMARY_CHARS = 100;
const clip = (s, n = SUMMARY_CHARS) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const plural = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;

/// One line (at most SUMMARY_CHARS) saying what a tool's arguments or result
/// hold: `{items: [...]}` is "N items", `{error: ...}` its message, another
/// object its top-level fields ("task_id: 7, paused: true"), text its first line.
export function summarize(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return clip(v.trim().split('\n')[0] || '(empty)');
  if (typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return plural(v.length, 'item');
  const keys = Object.keys(v);
  if (!keys.length) return '(empty)';
  // A failure: the agent's {error: ...} wrapper, or an API error body
  // ({error: {code, message, field}}); a run's own `error` field is just a field.
  const e = v.error;
  const apiError = e && typeof e === 'object' && typeof e.message === 'string';
  if (apiError) return clip(e.code ? `${e.code}: ${e.message}` : e.message);
  if (keys.length === 1 && keys[0] === 'error') return summarize(e);
  const field = (k) => {
    const x = v[k];
    if (Array.isArray(x)) return `${k}: [${x.length}]`;
    if (x && typeof x === 'object') return `${k}: {…}`;
    return `${k}: ${typeof x === 'string' ? x.split('\n')[0] : x}`;
  };
  if (Array.isArray(v.items)) {
    const rest = keys.filter((k) => k !== 'items' && k !== 'next_cursor').map(field);
    return clip([plural(v.items.length, 'item') + (v.next_cursor ? ' (more)' : ''), ...rest].join(', '));
  }
  return clip(keys.map(field).join(', '));
}

/// A collapsed block: `head` and the summary of `value` on one line, the whole
/// value (pretty JSON) when opened.
function folded(cls, head, value) {
  return h('details', { class: `fold ${cls}` },
    h('summary', {}, head, h('span', { class: 'fold-summary' }, summarize(value))),
    h('pre', {}, pretty(value)));
}

/// A tool call's card: the call (arguments folded) and a slot for its result.
function toolCard(name, args, pending) {
  const head = h('b', {}, `⚙ ${name}`);
  return h('div', { class: `tool-card${pending ? ' pending' : ''}`, 'data-tool': name },
    args === undefined ? h('div', { class: 'tool-head' }, head) : folded('tool-args', head, parsed(args)),
    h('div', { class: `tool-result${pending ? ' muted' : ''}` }, pending ? 'running…' : ''));
}

/// Shows a result in `card`: an ok/error badge and its summary, the JSON folded.
function showResult(card, ok, result) {
  card.classList.remove('pending');
  card.classList.add(ok ? 'ok' : 'failed');
  const slot = card.querySelector('.tool-result');
  slot.classList.remove('muted');
  fill(slot, folded('tool-json', h('span', { class: `badge ${ok ? 'state-success' : 'state-failed'}` }, ok ? 'ok' : 'error'), result));
}

/// A stored tool message failed when it is the agent's `{"error": ...}` wrapper.
const failedContent = (v) => !!v && typeof v === 'object' && !Array.isArray(v) &&
  Object.keys(v).length === 1 && 'error' in v;

export default function chat(view) {
  const list = h('ul', { class: 'plain conversations', id: 'conversations' });
  const log = h('div', { class: 'chat-log', id: 'chat-log' });
  const box = h('textarea', { name: 'message', rows: 2, placeholder: 'Ask about runs, failures, workers… (Enter to send)' });
  const send = h('button', { type: 'submit' }, 'Send');
  const form = h('form', { class: 'chat-form', id: 'chat-form' }, box, send);
  const unavailable = h('p', { class: 'muted', id: 'ai-status' });
  fill(view.el, h('h1', {}, 'AI chat'), unavailable, h('div', { class: 'chat' },
    h('aside', { class: 'card' }, h('button', { type: 'button', onclick: () => { conversationId = null; fill(log); } }, 'New conversation'), list),
    h('section', { class: 'card chat-main' }, log, form)));

  const unavailableError = (e) => e.status === 404 || e.code === 'llm_not_configured';
  const notAvailable = () => {
    fill(unavailable, 'AI agent not available');
    box.disabled = send.disabled = true;
  };

  const loadList = async () => {
    try {
      const r = await get('/api/v1/ai/conversations', view.signal);
      // {items: [{id, tenant, subject, title, created_at, updated_at, messages}]}
      fill(list, r.items.map((c) => h('li', { class: c.id === conversationId ? 'active' : '', 'data-conversation': c.id },
        h('a', { href: '#/chat', onclick: (e) => { e.preventDefault(); open(c.id); } }, c.title || c.id),
        h('div', { class: 'muted' }, time(c.updated_at)))));
    } catch (e) { if (unavailableError(e)) notAvailable(); }
  };

  const open = async (id) => {
    conversationId = id;
    fill(log);
    try {
      const r = await get(`/api/v1/ai/conversations/${encodeURIComponent(id)}/messages`, view.signal);
      // {conversation_id, items: [{seq, at, role, content, tool_calls?, tool_call_id?, name?}]};
      // a tool message's content is the result as JSON text (`{"error": ...}` when it failed).
      const cards = new Map();
      for (const m of r.items) {
        if ((m.role === 'user' || m.role === 'assistant') && m.content)
          log.append(h('div', { class: `msg ${m.role}` }, m.content));
        for (const c of m.tool_calls || []) {
          const card = toolCard(c.name, c.arguments, false);
          cards.set(c.id, card);
          log.append(card);
        }
        if (m.role === 'tool') {
          let card = cards.get(m.tool_call_id);
          if (!card) { card = toolCard(m.name, undefined, false); log.append(card); }
          const content = parsed(m.content);
          showResult(card, !failedContent(content), content);
        }
      }
    } catch (e) { log.append(h('p', { class: 'error' }, e.message)); }
    loadList();
  };

  /// Renders one streamed answer (chat or confirm) into the log.
  const render = async (path, body) => {
    let text = null;
    const cards = new Map();
    const onEvent = (name, d) => {
      if (name === 'conversation_id') conversationId = d.conversation_id;
      else if (name === 'text') {
        if (!text) { text = h('div', { class: 'msg assistant' }); log.append(text); }
        text.append(d.delta);
      } else if (name === 'tool_call') {
        const card = toolCard(d.name, d.arguments, true);
        cards.set(d.id, card);
        log.append(card);
        text = null;  // text after a tool call starts a new bubble
      } else if (name === 'tool_result') {
        let card = cards.get(d.id);
        // A confirmed action's result comes without a tool_call before it.
        if (!card) { card = toolCard(d.name, undefined, false); log.append(card); }
        showResult(card, d.ok, d.result);
      } else if (name === 'confirmation_required') {
        for (const [id, card] of cards)
          if (d.action_id.endsWith(id) && card.classList.contains('pending')) {
            card.classList.remove('pending');
            fill(card.querySelector('.tool-result'), 'awaiting confirmation');
          }
        log.append(confirmCard(d));
      } else if (name === 'error') {
        log.append(h('p', { class: 'error' }, `${d.code}: ${d.message}`));
      }
      log.scrollTop = log.scrollHeight;
    };
    try {
      await stream('POST', path, body, onEvent, view.signal);
    } catch (e) {
      if (unavailableError(e)) notAvailable();
      else if (e.name !== 'AbortError') log.append(h('p', { class: 'error' }, e.message));
    }
    loadList();
  };

  const confirmCard = (d) => {
    const buttons = h('div', { class: 'row' });
    const decide = async (approve) => {
      fill(buttons, h('span', { class: 'muted' }, approve ? 'approved' : 'cancelled'));
      await render('/api/v1/ai/confirm', { conversation_id: conversationId, action_id: d.action_id, approve });
    };
    fill(buttons, h('button', { type: 'button', class: 'danger', onclick: () => decide(true) }, 'Confirm'),
      h('button', { type: 'button', class: 'secondary', onclick: () => decide(false) }, 'Cancel'));
    return h('div', { class: 'tool-card confirm' }, h('b', {}, `Confirm ${d.name}?`), h('p', {}, d.summary),
      h('pre', {}, pretty(parsed(d.arguments))), buttons);
  };

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const message = box.value.trim();
    if (!message) return;
    box.value = '';
    log.append(h('div', { class: 'msg user' }, message));
    send.disabled = true;
    const body = { message };
    if (conversationId) body.conversation_id = conversationId;
    await render('/api/v1/ai/chat', body);
    send.disabled = false;
  });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
  loadList();
  if (conversationId) open(conversationId);
}
