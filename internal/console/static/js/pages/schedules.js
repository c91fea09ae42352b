// Schedules: the caller's cron schedules, read-only — each one's agent,
// expression and time zone, input, conversation, end and next tick (the
// runs each tick starts carry schedule_id in their metadata).
// They are created and deleted through the API (POST /v1/schedules).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { request } from '../api.js';
import { ErrorNote } from '../components/common.js';
import { short, textOf, when } from '../format.js';

export function Schedules() {
  const [cursors, setCursors] = useState(['']); // the cursor of each page seen
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const q = cursor ? `?limit=25&cursor=${encodeURIComponent(cursor)}` : '?limit=25';
    request('GET', `/v1/schedules${q}`).then((p) => { setPage(p); setError(null); }, setError);
  }, [cursor]);

  return html`<h1>Schedules</h1>
    <p class="muted">Cron schedules start runs without a caller; create and delete them with <code>POST /v1/schedules</code> and <code>DELETE /v1/schedules/{id}</code> (or the Agent Protocol's crons).</p>
    <${ErrorNote} error=${error} />
    ${page ? html`<p class="muted">${page.total} schedule${page.total === 1 ? '' : 's'}</p>
      <div class="table-wrap"><table class="schedules">
        <thead><tr><th>schedule</th><th>agent</th><th>cron</th><th>time zone</th><th>input</th><th>conversation</th><th>next tick</th><th>ends</th></tr></thead>
        <tbody>${page.schedules.map((s) => html`<tr key=${s.id} data-schedule=${s.id}>
          <td title=${s.id}>${short(s.id)}</td>
          <td><a href=${`#/runs?agent=${encodeURIComponent(s.agent_id)}`}>${s.agent_id}</a></td>
          <td><code>${s.cron}</code></td><td>${s.timezone}</td>
          <td>${textOf(s.input)}</td>
          <td>${s.context_id ? html`<a href=${`#/runs?context=${encodeURIComponent(s.context_id)}`}>${short(s.context_id)}</a>` : html`<span class="muted">new per tick</span>`}</td>
          <td>${s.next_fire_at ? when(s.next_fire_at) : html`<span class="muted">ended</span>`}</td>
          <td>${s.end_at ? when(s.end_at) : ''}</td>
        </tr>`)}</tbody>
      </table></div>
      <div class="buttons">
        <button disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous</button>
        <button disabled=${!page.next_cursor} onClick=${() => setCursors([...cursors, page.next_cursor])}>Next</button>
      </div>` : null}`;
}
