// Agents: every hosted agent as a card; one click starts a chat.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorNote } from '../components/common.js';

export function Agents() {
  const [agents, setAgents] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { api.agents().then((l) => setAgents(l.agents), setError); }, []);
  return html`<h1>Agents</h1><${ErrorNote} error=${error} />
    ${agents === null && !error ? html`<p class="muted">Loading…</p>` : null}
    <div class="cards">${(agents || []).map((a) => html`<${AgentCard} key=${a.id} a=${a} />`)}</div>`;
}

function AgentCard({ a }) {
  const chat = `#/chat/${encodeURIComponent(a.id)}`;
  return html`<article class="card" data-agent=${a.id}>
    <h2><a href=${chat}>${a.name}</a></h2>
    <p>${a.description}</p>
    <dl>
      <dt>engine</dt><dd>${a.engine || '—'}</dd>
      <dt>input</dt><dd>${(a.input_modes || []).join(', ') || 'any'}</dd>
      ${a.tools && a.tools.length ? html`<dt>tools</dt><dd>${a.tools.join(', ')}</dd>` : null}
    </dl>
    ${(a.skills || []).map((s) => html`<div class="skill" key=${s.id}><b>${s.name}</b> <span class="muted">${s.description}</span>
      ${(s.examples || []).length ? html`<div class="examples">${s.examples.map((x) => html`<a class="example" key=${x} href=${`${chat}?text=${encodeURIComponent(x)}`} title="Chat with this message"><code>${x}</code></a>`)}</div>` : null}</div>`)}
    <div class="buttons"><a class="button primary" href=${chat}>Chat</a> <a href=${`#/runs?agent=${encodeURIComponent(a.id)}`}>Runs</a> <a href=${a.card_url} target="_blank" rel="noopener">A2A card</a></div>
  </article>`;
}
