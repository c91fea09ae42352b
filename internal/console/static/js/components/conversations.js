// Conversations lists an agent's conversations (GET /v1/contexts), newest
// first, to reopen one with its transcript.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorNote } from './common.js';
import { when } from '../format.js';

export function Conversations({ agentId, current }) {
  const [list, setList] = useState([]);
  const [cursor, setCursor] = useState('');
  const [error, setError] = useState(null);
  const load = (c) => api.contexts({ agent: agentId, cursor: c, limit: 20 }).then((p) => {
    const mine = p.contexts.filter((x) => !(x.last_run.metadata && x.last_run.metadata.parent_run_id));
    setList((l) => (c ? [...l, ...mine] : mine));
    setCursor(p.next_cursor);
  }, setError);
  useEffect(() => { load(''); }, [agentId, current]);
  const chat = (id) => `#/chat/${encodeURIComponent(agentId)}${id ? `?context=${encodeURIComponent(id)}` : ''}`;
  return html`<nav class="conversations" aria-label="Conversations">
    <a class="button primary" href=${chat('')}>New conversation</a>
    <${ErrorNote} error=${error} />
    <ul>${list.map((c) => html`<li key=${c.id} class=${c.id === current ? 'current' : ''}>
      <a href=${chat(c.id)} data-context=${c.id}>${c.title || '(no text)'}</a>
      <small class="muted">${when(c.updated_at)} · ${c.runs} run${c.runs === 1 ? '' : 's'} · ${c.last_run.status}</small>
    </li>`)}</ul>
    ${cursor ? html`<button onClick=${() => load(cursor)}>More</button>` : null}
  </nav>`;
}
