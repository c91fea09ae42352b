// Runs: newest first, filtered by agent, status and context, paged by
// cursor; the page refreshes every two seconds while runs are live.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorNote, Status } from '../components/common.js';
import { cost, runDuration, short, terminal, tokens, when } from '../format.js';

const STATES = ['', 'submitted', 'working', 'input-required', 'completed', 'failed', 'canceled', 'rejected'];

export function Runs({ params }) {
  const [filters, setFilters] = useState({ agent: params.agent || '', status: params.status || '', context: params.context || '' });
  const [cursors, setCursors] = useState(['']); // the cursor of each page seen
  const [page, setPage] = useState(null);
  const [agents, setAgents] = useState([]);
  const [error, setError] = useState(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => { api.agents().then((l) => setAgents(l.agents.map((a) => a.id)), () => {}); }, []);
  useEffect(() => {
    let timer;
    const load = () => api.runs({ ...filters, cursor, limit: 25 }).then((p) => {
      setPage(p); setError(null);
      if (p.runs.some((r) => !terminal(r.status))) timer = setTimeout(load, 2000);
    }, setError);
    load();
    return () => clearTimeout(timer);
  }, [filters, cursor]);

  const set = (k) => (e) => { setFilters({ ...filters, [k]: e.target.value }); setCursors(['']); };
  return html`<h1>Runs</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>Agent <select value=${filters.agent} onChange=${set('agent')}><option value="">all</option>${agents.map((a) => html`<option key=${a}>${a}</option>`)}</select></label>
      <label>Status <select value=${filters.status} onChange=${set('status')}>${STATES.map((s) => html`<option key=${s} value=${s}>${s || 'all'}</option>`)}</select></label>
      <label>Context <input value=${filters.context} onChange=${set('context')} placeholder="context id" /></label>
    </form>
    <${ErrorNote} error=${error} />
    ${page ? html`<p class="muted">${page.total} run${page.total === 1 ? '' : 's'}</p>
      <div class="table-wrap"><table class="runs">
        <thead><tr><th>run</th><th>agent</th><th>status</th><th>started</th><th>duration</th><th>tokens</th><th>cost</th><th>context</th></tr></thead>
        <tbody>${page.runs.map((r) => html`<tr key=${r.id} data-run=${r.id}>
          <td><a href=${`#/runs/${r.id}`}>${short(r.id)}</a>${r.metadata && r.metadata.parent_run_id ? html` <small class="muted">step ${r.metadata.parent_step}</small>` : null}</td>
          <td>${r.agent_id}</td><td><${Status} status=${r.status} /></td><td>${when(r.created_at)}</td>
          <td>${runDuration(r)}</td><td>${tokens(r.usage)}</td><td>${cost(r.cost)}</td>
          <td><a href=${`#/chat/${encodeURIComponent(r.agent_id)}?context=${encodeURIComponent(r.context_id)}`}>${short(r.context_id)}</a></td>
        </tr>`)}</tbody>
      </table></div>
      <div class="buttons">
        <button disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer</button>
        <button disabled=${!page.next_cursor} onClick=${() => setCursors([...cursors, page.next_cursor])}>Older</button>
      </div>` : null}`;
}
