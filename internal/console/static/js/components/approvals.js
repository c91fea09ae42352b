// Approvals answers a run's pending tool approvals: approve, reject (with
// a reason) or edit the arguments, per call. Used by the chat and the
// inbox.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { json } from '../format.js';

export function Approvals({ approvals, onAnswer }) {
  return html`<div class="approvals">${approvals.map((a) => html`<${Approval} key=${a.call_id} a=${a} onAnswer=${onAnswer} />`)}</div>`;
}

function Approval({ a, onAnswer }) {
  const [editing, setEditing] = useState(false);
  const [args, setArgs] = useState(json(a.arguments || {}));
  const [reason, setReason] = useState('');
  const [err, setErr] = useState('');
  const answer = (decision) => {
    const d = { call_id: a.call_id, decision };
    if (decision === 'edit') {
      try { d.arguments = JSON.parse(args); } catch (e) { setErr(`arguments: ${e.message}`); return; }
    }
    if (reason) d.reason = reason;
    onAnswer([d]);
  };
  if (a.in_doubt) return html`<${InDoubt} a=${a} onAnswer=${onAnswer} />`;
  return html`<div class="approval" data-call=${a.call_id}>
    <div><b>${a.tool}</b> <code>${JSON.stringify(a.arguments || {})}</code> <span class="muted">${a.reason || ''}</span></div>
    ${editing ? html`<label>Arguments (JSON)<textarea rows="3" value=${args} onInput=${(e) => setArgs(e.target.value)} /></label>` : null}
    <label>Reason (optional)<input value=${reason} onInput=${(e) => setReason(e.target.value)} /></label>
    ${err ? html`<p class="note error">${err}</p>` : null}
    <div class="buttons">
      <button class="primary" onClick=${() => answer('approve')}>Approve</button>
      <button onClick=${() => answer('reject')}>Reject</button>
      ${editing ? html`<button onClick=${() => answer('edit')}>Run with these arguments</button>`
    : html`<button onClick=${() => setEditing(true)}>Edit arguments</button>`}
    </div>
  </div>`;
}

// InDoubt answers a call found in doubt after a crash (its intent was
// recorded, its result was not): retry it with the same effect key, skip
// it with the result the person knows it had, or fail the run.
function InDoubt({ a, onAnswer }) {
  const [result, setResult] = useState('');
  const [err, setErr] = useState('');
  const skip = () => {
    if (!result.trim()) { setErr('result: say what the call returned'); return; }
    onAnswer([{ call_id: a.call_id, decision: 'skip', result }]);
  };
  return html`<div class="approval in-doubt" data-call=${a.call_id}>
    <div><b>${a.tool}</b> <code>${JSON.stringify(a.arguments || {})}</code></div>
    <p class="note warn">In doubt after a crash: the call was sent, but its result was never recorded, so its effect may or may not have happened.
      Effect key <code>${a.effect_key || ''}</code>. <span class="muted">${a.reason || ''}</span></p>
    <label>Result it had (to skip it)<input value=${result} onInput=${(e) => setResult(e.target.value)} /></label>
    ${err ? html`<p class="note error">${err}</p>` : null}
    <div class="buttons">
      <button class="primary" onClick=${() => onAnswer([{ call_id: a.call_id, decision: 'approve' }])}>Retry with the same key</button>
      <button onClick=${skip}>Skip with this result</button>
      <button onClick=${() => onAnswer([{ call_id: a.call_id, decision: 'reject', reason: 'failed by a person after a crash' }])}>Fail the run</button>
    </div>
  </div>`;
}

// Answer is a run's question with an answer box (text).
export function Answer({ prompt, onAnswer }) {
  const [text, setText] = useState('');
  const submit = (e) => {
    e.preventDefault();
    if (text.trim()) onAnswer(text);
    setText('');
  };
  return html`<form class="answer" onSubmit=${submit}>
    ${prompt ? html`<div class="question">${prompt}</div>` : null}
    <input aria-label="Your answer" placeholder="Your answer" value=${text} onInput=${(e) => setText(e.target.value)} />
    <button class="primary" type="submit">Answer</button>
  </form>`;
}
