// The page's credential and every request it makes.
//
// The printed URL's token (or the API key, typed into the sign-in form) is traded once for this server's
// UI token (POST /ui/api/session). The tab keeps that token in sessionStorage, which belongs to this
// origin, port included, and sends it as `Authorization: Bearer` on every request, the event stream too
// (read with fetch, since EventSource cannot send a header). There is no cookie: a browser sends a cookie
// to every port of its host, so any other local server would receive it.
const KEY = 'massgen_ui_token';
const SIGNED_OUT = 'massgen-signed-out';

export const session = {
  get: () => sessionStorage.getItem(KEY),
  set: (token) => sessionStorage.setItem(KEY, token),
  clear: () => { sessionStorage.removeItem(KEY); window.dispatchEvent(new Event(SIGNED_OUT)); },
  onSignedOut: (fn) => { window.addEventListener(SIGNED_OUT, fn); return () => window.removeEventListener(SIGNED_OUT, fn); },
};

// A request that failed: `status` 0 when no answer came at all (the server is down or unreachable).
export class RequestError extends Error {
  constructor(status, message, code) { super(message); this.status = status; this.code = code || null; }
}

export const UNREACHABLE = 'the server is unreachable';
const api = (path) => `/ui/api${path}`;

async function send(path, { method = 'GET', body, headers = {}, signal, auth = true } = {}) {
  const all = { ...headers };
  if (auth) all.authorization = `Bearer ${session.get() || ''}`;
  if (body !== undefined) all['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(api(path), { method, headers: all, signal, credentials: 'omit', cache: 'no-store',
                                   body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new RequestError(0, UNREACHABLE, 'unreachable');
  }
  if (!res.ok) {
    const data = await res.json().catch(() => ({}));
    const e = data.error || {};
    if (auth && (res.status === 401 || e.code === 'invalid_token')) session.clear();
    throw new RequestError(res.status, e.message || `HTTP ${res.status}`, e.code);
  }
  return res;
}

export const getJSON = (path) => send(path).then((r) => r.json());
export const post = (path, body = {}) => send(path, { method: 'POST', body }).then((r) => r.json().catch(() => ({})));

// The token from the printed URL (`?token=` or `#token=`), taken out of the address bar at once.
export function tokenFromUrl() {
  const query = new URLSearchParams(location.search);
  const hash = new URLSearchParams(location.hash.slice(1));
  const given = query.get('token') || hash.get('token');
  if (query.has('token') || hash.has('token')) {
    query.delete('token');
    const rest = query.toString();
    history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}`);
  }
  return given;
}

export async function signIn(given) {
  const res = await send('/session', { method: 'POST', body: { token: given }, auth: false });
  session.set((await res.json()).token);
}

// A run's event stream: calls onOpen() once the server answered, then onEvent(name, data, id) per event;
// resolves when the response ends, rejects with a RequestError (status 0: the connection failed or broke).
export async function readEvents(path, lastId, { onOpen, onEvent, signal }) {
  const headers = { accept: 'text/event-stream' };
  if (lastId) headers['last-event-id'] = String(lastId);
  const res = await send(path, { headers, signal });
  onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let from = 0;  // where to look for the next blank line: an event of a megabyte arrives in many pieces
  for (;;) {
    let step;
    try {
      step = await reader.read();
    } catch (err) {
      if (err && err.name === 'AbortError') throw err;
      throw new RequestError(0, UNREACHABLE, 'unreachable');
    }
    if (step.done) return;
    buf += step.value;
    let cut;
    while ((cut = buf.indexOf('\n\n', from)) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      from = 0;
      let name = 'message'; let id = null; const data = [];
      for (const line of block.split('\n')) {
        if (!line || line.startsWith(':')) continue;  // a comment (the server's keep-alive ping)
        const at = line.indexOf(':');
        const field = at < 0 ? line : line.slice(0, at);
        let value = at < 0 ? '' : line.slice(at + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') name = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
      if (data.length) onEvent(name, data.join('\n'), id);
    }
    from = Math.max(0, buf.length - 1);
  }
}
