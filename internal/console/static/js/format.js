// Small formatters shared by the pages.

export const terminal = (s) => ['completed', 'failed', 'canceled', 'rejected'].includes(s);

export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function clock(iso) {
  return iso ? new Date(iso).toISOString().slice(11, 23) : '';
}

export function duration(ms) {
  if (ms == null || Number.isNaN(ms)) return '';
  if (ms < 10) return `${ms.toFixed(ms < 1 ? 2 : 1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

export const runDuration = (r) => duration(new Date(r.updated_at) - new Date(r.created_at));

export const tokens = (u) => (u && u.total_tokens ? `${u.total_tokens} tok` : '');

export const cost = (c) => (c == null ? '' : `$${c.toFixed(c < 0.01 ? 5 : 3)}`);

export const short = (id) => (id ? id.slice(-8) : '');

export const json = (v) => JSON.stringify(v, null, 2);

// textOf joins a message's text parts.
export const textOf = (m) => ((m && m.parts) || []).filter((p) => p.type === 'text').map((p) => p.text).join('');

// dataOf returns the data parts' values of a message.
export const dataOf = (m) => ((m && m.parts) || []).filter((p) => p.type === 'data').map((p) => p.data);

// approvalsOf returns the pending approvals a prompt lists.
export function approvalsOf(m) {
  for (const d of dataOf(m)) if (d && Array.isArray(d.pending_approvals)) return d.pending_approvals;
  return [];
}

// pausedOf tells a paused run's status message.
export const pausedOf = (m) => dataOf(m).some((d) => d && d.paused);

// shownText is how the chat shows a user message: its text, else its data.
export const shownText = (m) => textOf(m) || dataOf(m).map((d) => JSON.stringify(d)).join(' ');
