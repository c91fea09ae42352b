// Timeline lists a run's events (seq, time, type, actor), framed by
// attempt, each with its raw JSON one click away. Long logs render in
// pages of 500 rows.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { clock, json, textOf } from '../format.js';

const PAGE = 500;

// summary is one line about an event.
function summary(ev) {
  switch (ev.type) {
    case 'run.start': return `attempt ${ev.attempt}${ev.resumed ? `, resumed: ${ev.resumed}` : ''}`;
    case 'status': return ev.state + (ev.error ? `: ${ev.error.message}` : '');
    case 'delta': return ev.text ? JSON.stringify(ev.text) : ev.tool_call ? `call ${ev.tool_call.name}` : ev.tool_result ? `result of ${ev.tool_result.name || ev.tool_result.tool_call_id}` : '';
    case 'step.start': case 'step.complete': case 'step.error': {
      const d = (ev.payload && ev.payload.detail) || {};
      return [ev.payload && ev.payload.kind, d.step || d.node || '', d.status || '', d.duration_ms ? `${d.duration_ms} ms` : ''].filter(Boolean).join(' ');
    }
    case 'governance': return `${ev.payload.tool}: ${ev.payload.verdict} (${ev.payload.source || ''})`;
    case 'signal': return ev.signal + (ev.text ? `: ${ev.text}` : '');
    case 'input': return (textOf(ev.prompt).split('\n')[0] || '').slice(0, 120);
    case 'artifact': return ev.artifact.name || ev.artifact.id;
    case 'run.end': return ev.state;
    case 'handoff': return `${ev.from} → ${ev.to}`;
    case 'workflow': return [ev.kind, ev.payload && (ev.payload.step || ev.payload.to || '')].filter(Boolean).join(' ');
    case 'effect.intent': return `${ev.tool} (${ev.effects || 'effect'}), key ${ev.key}`;
    case 'effect.result': return `${ev.tool}: ${ev.is_error ? 'error' : 'done'}, key ${ev.key}`;
    case 'effect.doubt': return `${ev.tool} in doubt after a crash: ${ev.policy}`;
    case 'effect.resolved': return `${ev.tool}: ${ev.resolution}${ev.reason ? ` (${ev.reason})` : ''}`;
    default: return '';
  }
}

export function Timeline({ events }) {
  const [shown, setShown] = useState(PAGE);
  const [open, setOpen] = useState(null);
  const rows = [];
  for (const ev of events.slice(0, shown)) {
    if (ev.type === 'run.start') {
      rows.push(html`<tr key=${`a${ev.seq}`} class="attempt"><th colspan="5">Attempt ${ev.attempt}${ev.resumed ? ` — resumed: ${ev.resumed}` : ''}</th></tr>`);
    }
    rows.push(html`<tr key=${ev.seq} data-seq=${ev.seq} data-type=${ev.type} class=${`ev t-${ev.type.replace('.', '-')}`}>
      <td><button class="link" aria-expanded=${open === ev.seq} title="raw JSON" onClick=${() => setOpen(open === ev.seq ? null : ev.seq)}>${ev.seq}</button></td><td>${clock(ev.time)}</td><td>${ev.type}</td><td>${ev.actor || ''}</td><td class="sum">${summary(ev)}${ev.child_run_id ? html` <a href=${`#/runs/${ev.child_run_id}`}>child run</a>` : null}</td></tr>`);
    if (open === ev.seq) rows.push(html`<tr key=${`j${ev.seq}`} class="raw"><td colspan="5"><pre class="json">${json(ev)}</pre></td></tr>`);
  }
  return html`<div class="table-wrap"><table class="timeline">
    <thead><tr><th>seq</th><th>time</th><th>type</th><th>actor</th><th>what</th></tr></thead>
    <tbody>${rows}</tbody></table></div>
    ${events.length > shown ? html`<button onClick=${() => setShown(shown + PAGE)}>Show ${Math.min(PAGE, events.length - shown)} more of ${events.length - shown}</button>` : null}`;
}
