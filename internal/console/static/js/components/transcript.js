// Transcript renders a conversation's stored messages; LiveRun the run
// that streams now (live.js folds its events into blocks).
import { html } from '../html.js';
import { Artifacts, Part, ToolCall } from './common.js';

// Transcript shows messages in order; tool calls collapse with their
// results. Messages of the run shown live (hideRun) are left to it.
export function Transcript({ messages, hideRun }) {
  const results = {};
  for (const m of messages) for (const p of m.parts) if (p.type === 'tool_result') results[p.tool_result.tool_call_id] = p.tool_result;
  const shown = messages.filter((m) => m.role !== 'tool' && !(hideRun && m.task_id === hideRun));
  return html`<ol class="transcript">${shown.map((m) => html`<li key=${m.position} class=${`msg ${m.role}`} data-role=${m.role}>
    <div class="who">${m.role === 'user' ? 'you' : m.name || m.role}</div>
    ${m.parts.map((p, i) => (p.type === 'tool_call'
    ? html`<${ToolCall} key=${i} call=${p.tool_call} result=${results[p.tool_call.id]} />`
    : html`<${Part} key=${i} part=${p} />`))}
  </li>`)}</ol>`;
}

export function LiveRun({ live }) {
  return html`<div class="live" data-run=${live.runId} data-status=${live.status} data-last-seq=${live.lastSeq}>
    ${live.blocks.map((b, i) => html`<${Block} key=${i} b=${b} />`)}
    <${Artifacts} artifacts=${live.artifacts} />
  </div>`;
}

function Block({ b }) {
  switch (b.type) {
    case 'user':
      return html`<div class="msg user" data-role="user"><div class="who">you</div><div class="text">${b.text}</div></div>`;
    case 'text':
      return html`<div class="msg assistant streamed" data-actor=${b.actor}><div class="who">${b.actor}</div><div class="text">${b.text}</div></div>`;
    case 'tool':
      return html`<${ToolCall} call=${b.call} result=${b.result} verdicts=${b.verdicts} progress=${b.progress} />`;
    case 'question':
      return html`<div class="msg assistant question-block"><div class="who">asks</div><div class="text">${b.text}</div></div>`;
    case 'error':
      return html`<p class="note error">${b.text}</p>`;
    default:
      return html`<p class="muted note-line">${b.text}${b.run ? html` (<a href=${`#/runs/${b.run}`}>its run</a>)` : null}</p>`;
  }
}
