// The console's one door to the server: the public REST + SSE API, with
// the caller's credential (kept in sessionStorage, for this tab only).

const KEY = 'agentd.credential';

export const credential = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (v) => (v ? sessionStorage.setItem(KEY, v) : sessionStorage.removeItem(KEY)),
};

// ApiError is a refused request: its HTTP status and problem details.
export class ApiError extends Error {
  constructor(status, problem) {
    const detail = (problem && (problem.detail || problem.title)) || `HTTP ${status}`;
    super(status === 401 ? `Not signed in: ${detail}` : status === 403 ? `Not allowed: ${detail}` : detail);
    this.status = status;
    this.problem = problem;
  }
}

// Listeners learn of every 401, so that the shell can ask for a key.
const unauthorized = new Set();
export const onUnauthorized = (f) => (unauthorized.add(f), () => unauthorized.delete(f));

function headers(extra = {}) {
  const h = { Accept: 'application/json', ...extra };
  const c = credential.get();
  if (c) h.Authorization = `Bearer ${c}`;
  return h;
}

async function refuse(res) {
  let problem = null;
  try { problem = await res.json(); } catch { /* not JSON */ }
  if (res.status === 401) unauthorized.forEach((f) => f());
  return new ApiError(res.status, problem);
}

export async function request(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (!res.ok) throw await refuse(res);
  return res.status === 204 ? null : res.json();
}

const enc = encodeURIComponent;

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const api = {
  agents: () => request('GET', '/v1/agents'),
  card: (url) => request('GET', url),
  server: () => request('GET', '/v1/server'),
  runs: (params) => request('GET', `/v1/runs${query(params)}`),
  run: (id) => request('GET', `/v1/runs/${enc(id)}`),
  trajectory: (id) => request('GET', `/v1/runs/${enc(id)}/trajectory`),
  contexts: (params) => request('GET', `/v1/contexts${query(params)}`),
  transcript: (id, after) => request('GET', `/v1/contexts/${enc(id)}/messages${query({ after, limit: 1000 })}`),
  send: (agentId, body) => request('POST', `/v1/agents/${enc(agentId)}/messages?wait=false`, body),
  input: (runId, body) => request('POST', `/v1/runs/${enc(runId)}/input?wait=false`, body),
  cancel: (runId) => request('POST', `/v1/runs/${enc(runId)}/cancel`),
  signal: (runId, type, text) => request('POST', `/v1/runs/${enc(runId)}/signals`, text ? { type, text } : { type }),
};

// follow reads a run's events after seq `after` (sent as Last-Event-ID)
// and hands them to onBatch as they come, parsed, in seq order. It returns
// when the server closes the stream (the run ended or waits for input) or
// `signal` aborts it.
export async function follow(runId, after, onBatch, signal) {
  const extra = { Accept: 'text/event-stream' };
  if (after > 0) extra['Last-Event-ID'] = String(after);
  const res = await network(fetch(`/v1/runs/${enc(runId)}/events`, { headers: headers(extra), signal }));
  if (!res.ok) throw await refuse(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await network(reader.read());
    if (done) return;
    buf += value;
    const batch = [];
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const ev = parseEvent(buf.slice(0, cut));
      buf = buf.slice(cut + 2);
      if (ev) batch.push(ev);
    }
    if (batch.length) onBatch(batch);
  }
}

// NetworkError is a stream cut by the network (the server restarted, the
// connection dropped): following again resumes it.
export class NetworkError extends Error {}

async function network(p) {
  try {
    return await p;
  } catch (e) {
    throw e.name === 'AbortError' ? e : new NetworkError(e.message);
  }
}

// parseEvent reads one SSE block; comments (keep-alives) give null.
function parseEvent(block) {
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('data: ')) data += line.slice(6);
  }
  return data ? JSON.parse(data) : null;
}

// readLog reads a run's whole stored log (up to the end of its current
// attempt when it waits for input).
export async function readLog(runId, signal) {
  const out = [];
  await follow(runId, 0, (b) => out.push(...b), signal);
  return out;
}
