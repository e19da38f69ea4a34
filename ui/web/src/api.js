// The server's endpoints (the cookie carries the token, so plain fetch and
// EventSource calls are authenticated).
export async function getJson(path) {
  const response = await fetch(path, { credentials: 'same-origin' });
  const body = await readBody(response);
  if (!response.ok) throw new Error(body.message || `${path}: HTTP ${response.status}`);
  return body;
}

export async function postCommand(sessionId, command) {
  const response = await fetch(`/api/sessions/${sessionId}/command`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(command),
  });
  const body = await readBody(response);
  if (body.ok === undefined) body.ok = response.ok;
  if (!body.message && !response.ok) body.message = `HTTP ${response.status}`;
  return body;
}

async function readBody(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { ok: response.ok, message: text.trim() };
  }
}

// Opens an SSE stream; `handlers` maps event names to functions of the
// parsed data. A stream refused before it opened (403, 404, 503) has no
// readable status in EventSource, so the same URL is asked once more with
// fetch to learn the server's one-line reason, given to onRefused.
export function openStream(path, handlers, onRefused) {
  const source = new EventSource(path);
  let opened = false;
  source.onopen = () => { opened = true; };
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (event) => {
      if (!event.data) return;
      let data;
      try { data = JSON.parse(event.data); } catch { return; }
      handle(data);
    });
  }
  source.onerror = async () => {
    if (opened || source.readyState !== EventSource.CLOSED) return;
    source.close();
    if (!onRefused) return;
    const abort = new AbortController();
    try {
      const response = await fetch(path, { signal: abort.signal, credentials: 'same-origin' });
      if (response.ok) { abort.abort(); onRefused('the stream closed'); return; }
      const body = await readBody(response);
      onRefused(body.message || `HTTP ${response.status}`);
    } catch (error) {
      onRefused(String(error.message || error));
    }
  };
  return source;
}
