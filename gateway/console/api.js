// The console's REST client: every call carries the bearer token kept in
// sessionStorage; API errors become ApiError values (status, code, field); a
// 401 clears the token and tells the app to show the login page. Streams
// (Server-Sent Events) are read with fetch, because EventSource cannot send an
// Authorization header.

const TOKEN_KEY = 'aisched.token';

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || '';
    this.field = field || '';
  }
}

export const token = () => sessionStorage.getItem(TOKEN_KEY) || '';
export const setToken = (t) => sessionStorage.setItem(TOKEN_KEY, t);
export const clearToken = () => sessionStorage.removeItem(TOKEN_KEY);

function headers(extra = {}) {
  const h = { ...extra };
  if (token()) h.Authorization = `Bearer ${token()}`;
  return h;
}

async function failure(res, path) {
  let code = '', message = '', field = '';
  try {
    const body = await res.json();
    ({ code = '', message = '', field = '' } = body.error || {});
  } catch (_) { /* not JSON: keep the status */ }
  if (res.status === 401 && !path.startsWith('/api/v1/auth/login')) {
    clearToken();
    window.dispatchEvent(new CustomEvent('aisched:unauthenticated'));
  }
  return new ApiError(res.status, code, message || `HTTP ${res.status}`, field);
}

async function send(method, path, body, signal) {
  const init = { method, headers: headers(), signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res, path);
  return res;
}

/// JSON in, JSON out; null for 204. Throws ApiError.
export async function api(method, path, body, signal) {
  const res = await send(method, path, body, signal);
  if (res.status === 204) return null;
  return res.json();
}

export const get = (path, signal) => api('GET', path, undefined, signal);

/// The body as text (GET /metrics).
export async function getText(path, signal) {
  return (await send('GET', path, undefined, signal)).text();
}

/// Sends the request and calls onEvent(name, data) for every Server-Sent
/// Event of the answer until the stream ends or `signal` aborts. `data` is
/// parsed JSON (the raw text when it is not JSON). Throws ApiError when the
/// answer is not a stream.
export async function stream(method, path, body, onEvent, signal) {
  const res = await send(method, path, body, signal);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let name = 'message', data = [];
  const dispatch = () => {
    if (data.length) {
      const text = data.join('\n');
      let value = text;
      try { value = JSON.parse(text); } catch (_) { /* keep text */ }
      onEvent(name, value);
    }
    name = 'message';
    data = [];
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') dispatch();
      else if (line.startsWith(':')) continue;  // keep-alive comment
      else if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
  }
  dispatch();
}
