// Server: what this server is, its store and readiness, and where its
// documents are.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorNote } from '../components/common.js';
import { when } from '../format.js';

export function Server() {
  const [s, setS] = useState(null);
  const [agents, setAgents] = useState([]);
  const [error, setError] = useState(null);
  useEffect(() => {
    api.server().then(setS, setError);
    api.agents().then((l) => setAgents(l.agents), () => {});
  }, []);
  if (!s) return html`<h1>Server</h1><${ErrorNote} error=${error} />`;
  return html`<h1>Server</h1>
    <dl class="facts" data-store=${s.store}>
      <dt>version</dt><dd>${s.version}${s.revision ? ` (${s.revision.slice(0, 12)})` : ''}</dd>
      <dt>Go</dt><dd>${s.go_version}</dd>
      <dt>store</dt><dd>${s.store === 'postgres' ? 'PostgreSQL' : 'memstore (in memory: data is lost on exit)'}</dd>
      <dt>this replica</dt><dd>${s.ready ? 'ready' : `not ready: ${s.reason}`}</dd>
      <dt>started</dt><dd>${when(s.started_at)}</dd>
      <dt>agents</dt><dd>${s.agents}</dd>
    </dl>
    <h2>Documents</h2>
    <ul>
      <li><a href=${s.links.openapi} target="_blank" rel="noopener">OpenAPI description (/openapi.yaml)</a></li>
      <li><a href=${s.links.agent_card} target="_blank" rel="noopener">the default agent's A2A card</a></li>
      ${agents.map((a) => html`<li key=${a.id}><a href=${a.card_url} target="_blank" rel="noopener">${a.name}'s A2A card</a></li>`)}
    </ul>`;
}
