// AI chat: the conversation list, and a message box that POSTs
// /api/v1/ai/chat and renders the Server-Sent Events as they arrive — text
// deltas, tool-call cards (name, arguments, then the result), and a
// confirm/cancel card for a destructive call (POST /api/v1/ai/confirm, which
// answers with the same stream). "AI agent not available" while the routes 404.
import { get, stream } from './api.js';
import { h, fill, time } from './ui.js';

let conversationId = null;  // kept across visits

const pretty = (v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

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

  const notAvailable = () => {
    fill(unavailable, 'AI agent not available');
    box.disabled = send.disabled = true;
  };

  const loadList = async () => {
    try {
      const r = await get('/api/v1/ai/conversations', view.signal);
      const items = r.items || r.conversations || [];
      fill(list, items.map((c) => {
        const id = c.conversation_id || c.id;
        return h('li', { class: id === conversationId ? 'active' : '' }, h('a', { href: '#/chat', onclick: (e) => { e.preventDefault(); open(id); } },
          c.title || c.summary || id), h('div', { class: 'muted' }, time(c.updated_at || c.created_at)));
      }));
    } catch (e) { if (e.status === 404) notAvailable(); }
  };

  const open = async (id) => {
    conversationId = id;
    fill(log);
    try {
      const r = await get(`/api/v1/ai/conversations/${encodeURIComponent(id)}/messages`, view.signal);
      for (const m of r.items || r.messages || []) {
        if (m.role === 'user' || m.role === 'assistant')
          log.append(h('div', { class: `msg ${m.role}` }, m.content || ''));
        else if (m.role === 'tool')
          log.append(h('div', { class: 'tool-card' }, h('b', {}, `tool ${m.name || ''}`), h('pre', {}, pretty(m.content))));
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
        text.append(d.delta || '');
      } else if (name === 'tool_call') {
        const card = h('div', { class: 'tool-card pending', 'data-tool': d.name }, h('b', {}, `⚙ ${d.name}`),
          h('pre', {}, pretty(d.arguments)), h('div', { class: 'tool-result muted' }, 'running…'));
        cards.set(d.id, card);
        log.append(card);
        text = null;  // text after a tool call starts a new bubble
      } else if (name === 'tool_result') {
        let card = cards.get(d.id);
        if (!card) { card = h('div', { class: 'tool-card' }, h('b', {}, `⚙ ${d.name}`), h('div', { class: 'tool-result' })); log.append(card); }
        card.classList.remove('pending');
        card.classList.add(d.ok ? 'ok' : 'failed');
        fill(card.querySelector('.tool-result'), h('span', { class: `badge ${d.ok ? 'state-success' : 'state-failed'}` }, d.ok ? 'ok' : 'error'),
          h('pre', {}, pretty(d.result)));
      } else if (name === 'confirmation_required') {
        log.append(confirmCard(d));
      } else if (name === 'error') {
        log.append(h('p', { class: 'error' }, `${d.code || 'error'}: ${d.message || ''}`));
      }
      log.scrollTop = log.scrollHeight;
    };
    try {
      await stream('POST', path, body, onEvent, view.signal);
    } catch (e) {
      if (e.status === 404) notAvailable();
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
    return h('div', { class: 'tool-card confirm' }, h('b', {}, `Confirm ${d.name}?`), h('p', {}, d.summary || ''),
      h('pre', {}, pretty(d.arguments)), buttons);
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
