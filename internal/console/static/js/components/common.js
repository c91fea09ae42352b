// Components every page uses: status badges, errors, parts, JSON.
import { html } from '../html.js';
import { json } from '../format.js';

export const Status = ({ status }) => html`<span class=${`status s-${status}`}>${status}</span>`;

// ErrorNote shows a refused request plainly (401 and 403 say so).
export function ErrorNote({ error }) {
  if (!error) return null;
  const kind = error.status === 401 ? 'unauthorized' : error.status === 403 ? 'forbidden' : 'error';
  return html`<p class=${`note ${kind}`} role="alert">${error.message}</p>`;
}

export const Json = ({ value }) => html`<pre class="json">${json(value)}</pre>`;

// Part renders one message or artifact part: text, JSON data or a file.
export function Part({ part }) {
  switch (part.type) {
    case 'text':
      return html`<div class="text">${part.text}</div>`;
    case 'data':
      return html`<details class="data" open><summary>data (${part.media_type || 'application/json'})</summary><${Json} value=${part.data} /></details>`;
    case 'file': {
      const f = part.file || {};
      const href = f.url || (f.bytes ? `data:${part.media_type || 'application/octet-stream'};base64,${f.bytes}` : '');
      return html`<div class="file"><span class="tag">file</span> ${href ? html`<a href=${href} download=${f.name || 'file'}>${f.name || 'file'}</a>` : f.name} <small>${part.media_type || ''}</small></div>`;
    }
    default:
      return null;
  }
}

export function Artifacts({ artifacts }) {
  if (!artifacts || !artifacts.length) return null;
  return html`<section class="artifacts"><h3>Artifacts</h3>
    ${artifacts.map((a) => html`<div class="artifact" key=${a.id} data-artifact=${a.id}>
      <div class="artifact-name">${a.name || a.id}</div>
      ${(a.parts || []).map((p, i) => html`<${Part} key=${i} part=${p} />`)}
    </div>`)}
  </section>`;
}

// ToolCall is a collapsible tool call with its result.
export function ToolCall({ call, result, verdicts, progress }) {
  const failed = result && result.is_error;
  return html`<details class=${`tool${failed ? ' failed' : ''}`} data-tool=${call.name}>
    <summary><span class="tag">tool</span> <b>${call.name}</b> <code>${JSON.stringify(call.arguments || {})}</code>
      ${result ? html` <span class="muted">→ ${failed ? 'error' : 'done'}</span>` : html` <span class="muted">…</span>`}</summary>
    ${(verdicts || []).map((v, i) => html`<div key=${i} class="verdict">governance: <b>${v.verdict}</b>${v.rule ? ` by “${v.rule}”` : ''}${v.source ? ` (${v.source})` : ''}${v.decision ? ` — decision: ${v.decision}` : ''}</div>`)}
    ${progress ? html`<div class="progress">${progress}</div>` : null}
    ${result ? html`<pre class="result">${result.content}</pre>` : null}
  </details>`;
}
