// Assistants: the stored, versioned configurations of the agents, read
// only — each at its latest version with what it overrides; a row opens
// its versions. They are written over the REST API or the Agent Protocol
// (README "Assistants").
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api, request } from '../api.js';
import { ErrorNote, Json } from '../components/common.js';
import { when } from '../format.js';

const enc = encodeURIComponent;
const list = (params) => request('GET', `/v1/assistants?${new URLSearchParams(params)}`);
const versions = (id) => request('GET', `/v1/assistants/${enc(id)}/versions?limit=100`);

export function Assistants({ params }) {
  const [agent, setAgent] = useState(params.agent || '');
  const [agents, setAgents] = useState([]);
  const [page, setPage] = useState(null);
  const [open, setOpen] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { api.agents().then((l) => setAgents(l.agents.map((a) => a.id)), () => {}); }, []);
  useEffect(() => {
    list(agent ? { agent, limit: 100 } : { limit: 100 }).then((p) => { setPage(p); setError(null); }, setError);
  }, [agent]);
  return html`<h1>Assistants</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>Agent <select value=${agent} onChange=${(e) => { setAgent(e.target.value); setOpen(null); }}><option value="">all</option>${agents.map((a) => html`<option key=${a}>${a}</option>`)}</select></label>
    </form>
    <${ErrorNote} error=${error} />
    ${page ? html`<p class="muted">${page.total || 0} assistant${page.total === 1 ? '' : 's'}</p>
      <div class="table-wrap"><table class="assistants">
        <thead><tr><th>name</th><th>agent</th><th>version</th><th>overrides</th><th>updated</th></tr></thead>
        <tbody>${page.assistants.map((a) => html`<${Row} key=${a.id} a=${a} open=${open === a.id} toggle=${() => setOpen(open === a.id ? null : a.id)} />`)}</tbody>
      </table></div>` : null}`;
}

function Row({ a, open, toggle }) {
  return html`<tr data-assistant=${a.id}>
      <td><button class="link" aria-expanded=${open} onClick=${toggle}>${a.name}</button> <small class="muted">${a.id}</small></td>
      <td><a href=${`#/chat/${enc(a.agent_id)}`}>${a.agent_id}</a></td>
      <td>${a.version}</td>
      <td>${Object.keys(a.context || {}).join(', ') || html`<span class="muted">none</span>`}</td>
      <td>${when(a.updated_at)}</td>
    </tr>
    ${open ? html`<tr><td colspan="5"><${Versions} id=${a.id} latest=${a.version} /></td></tr>` : null}`;
}

function Versions({ id, latest }) {
  const [vs, setVs] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { versions(id).then((l) => setVs(l.assistants), setError); }, [id]);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!vs) return html`<p class="muted">Loading…</p>`;
  return html`<ol class="versions" reversed>${vs.map((v) => html`<li key=${v.version} data-version=${v.version}>
    <b>version ${v.version}</b>${v.version === latest ? ' (latest)' : ''} <span class="muted">${when(v.version_created_at)}</span>
    ${v.description ? html`<p>${v.description}</p>` : null}
    <${Json} value=${{ context: v.context, metadata: v.metadata }} />
  </li>`)}</ol>`;
}
