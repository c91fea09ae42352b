// Inbox: every run waiting on a person, across agents, newest first —
// tool approvals and questions — each answerable in place.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorNote } from '../components/common.js';
import { Answer, Approvals } from '../components/approvals.js';
import { short, textOf, when } from '../format.js';

export function Inbox() {
  const [runs, setRuns] = useState(null);
  const [error, setError] = useState(null);
  const [done, setDone] = useState({});
  const load = () => api.runs({ status: 'input-required', limit: 100 }).then((p) => setRuns(p.runs.filter((r) => r.status === 'input-required')), setError);
  useEffect(() => {
    load();
    const t = setInterval(load, 3000);
    return () => clearInterval(t);
  }, []);
  // A question answered leaves the list until the run asks again (a flow
  // asks one question after another): keyed by run and question.
  const key = (r) => `${r.id}/${(r.status_message && r.status_message.id) || ''}`;
  const answer = (run, body) => api.input(run.id, body).then(() => { setDone((d) => ({ ...d, [key(run)]: true })); load(); }, setError);
  const waiting = (runs || []).filter((r) => !done[key(r)]);
  return html`<h1>Inbox</h1><${ErrorNote} error=${error} />
    ${runs && !waiting.length ? html`<p class="muted">Nothing waits for you.</p>` : null}
    ${waiting.map((r) => html`<article class="card inbox-item" key=${key(r)} data-run=${r.id}>
      <h2>${r.agent_id} <small class="muted">${when(r.updated_at)}</small></h2>
      <p><a href=${`#/runs/${r.id}`}>run ${short(r.id)}</a> · <a href=${`#/chat/${encodeURIComponent(r.agent_id)}?context=${encodeURIComponent(r.context_id)}`}>conversation</a></p>
      ${r.pending_approvals && r.pending_approvals.length
    ? html`<${Approvals} approvals=${r.pending_approvals} onAnswer=${(approvals) => answer(r, { approvals })} />`
    : html`<${Answer} prompt=${textOf(r.status_message)} onAnswer=${(text) => answer(r, { text })} />`}
    </article>`)}`;
}
