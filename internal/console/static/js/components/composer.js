// Composer writes a message: text, and a JSON data part or a file part
// when the agent accepts those media types.
import { useState } from 'preact/hooks';
import { html } from '../html.js';

const accepts = (agent, type) => {
  const modes = (agent && agent.input_modes) || [];
  return modes.length === 0 || modes.some((m) => m === type || m === '*/*' || (m.endsWith('/*') && type.startsWith(m.slice(0, -1))));
};

function readFile(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).split(',')[1] || '');
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

export function Composer({ agent, onSend, busy, draft }) {
  const [text, setText] = useState(draft || '');
  const [data, setData] = useState('');
  const [file, setFile] = useState(null);
  const [more, setMore] = useState(false);
  const [err, setErr] = useState('');
  const submit = async (e) => {
    e.preventDefault();
    setErr('');
    const parts = [];
    if (text.trim()) parts.push({ type: 'text', text });
    if (data.trim()) {
      try { parts.push({ type: 'data', data: JSON.parse(data), media_type: 'application/json' }); } catch (x) { setErr(`data: ${x.message}`); return; }
    }
    if (file) parts.push({ type: 'file', file: { name: file.name, bytes: await readFile(file) }, media_type: file.type || 'application/octet-stream' });
    if (!parts.length) return;
    const body = parts.length === 1 && parts[0].type === 'text' ? { text } : { message: { role: 'user', parts } };
    onSend(body, text || (file ? `[file ${file.name}]` : '[data]'));
    setText(''); setData(''); setFile(null);
  };
  const examples = ((agent && agent.skills) || []).flatMap((s) => s.examples || []);
  return html`<form class="composer" onSubmit=${submit}>
    ${examples.length ? html`<div class="examples">${examples.map((x) => html`<button type="button" class="chip" key=${x} onClick=${() => setText(x)}>${x}</button>`)}</div>` : null}
    <div class="row">
      <textarea aria-label="Message" placeholder="Message" rows="2" value=${text} onInput=${(e) => setText(e.target.value)}
        onKeyDown=${(e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); e.target.form.requestSubmit(); } }} />
      <button class="primary" type="submit" disabled=${busy}>Send</button>
    </div>
    <button type="button" class="link" onClick=${() => setMore(!more)} aria-expanded=${more}>${more ? 'Text only' : 'Attach data or a file'}</button>
    ${more ? html`<div class="attach">
      ${accepts(agent, 'application/json') ? html`<label>JSON data part<textarea rows="3" value=${data} onInput=${(e) => setData(e.target.value)} placeholder='{"order": "A-1001"}' /></label>` : null}
      <label>File part<input type="file" onChange=${(e) => setFile(e.target.files[0] || null)} /></label>
    </div>` : null}
    ${err ? html`<p class="note error">${err}</p>` : null}
  </form>`;
}
