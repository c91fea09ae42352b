// The console's shell: navigation, the hash router (#/agents, #/chat/ID,
// #/assistants, #/runs, #/runs/ID, #/inbox, #/schedules, #/server) and the credential prompt.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { credential, onUnauthorized } from './api.js';
import { Agents } from './pages/agents.js';
import { Chat } from './pages/chat.js';
import { Runs } from './pages/runs.js';
import { Run } from './pages/run.js';
import { Inbox } from './pages/inbox.js';
import { Server } from './pages/server.js';
import { Assistants } from './pages/assistants.js';
import { Schedules } from './pages/schedules.js';

// route parses location.hash into a page and its parameters.
function route(hash) {
  const [path, qs] = hash.replace(/^#\/?/, '').split('?');
  const params = Object.fromEntries(new URLSearchParams(qs || ''));
  const [page, id] = path.split('/').map(decodeURIComponent);
  return { page: page || 'agents', id, params };
}

function Page({ r }) {
  switch (r.page) {
    case 'chat': return html`<${Chat} agentId=${r.id} contextId=${r.params.context} draft=${r.params.text} />`;
    case 'runs': return r.id ? html`<${Run} runId=${r.id} />` : html`<${Runs} params=${r.params} />`;
    case 'inbox': return html`<${Inbox} />`;
    case 'server': return html`<${Server} />`;
    case 'assistants': return html`<${Assistants} params=${r.params} />`;
    case 'schedules': return html`<${Schedules} />`;
    default: return html`<${Agents} />`;
  }
}

// SignIn asks for an API key or bearer token, kept for this tab only.
function SignIn({ onDone }) {
  const [value, setValue] = useState('');
  const submit = (e) => {
    e.preventDefault();
    credential.set(value.trim());
    onDone();
  };
  return html`<form class="signin" onSubmit=${submit}>
    <p role="alert"><b>This server needs a credential.</b> Paste an API key or a bearer token; it stays in this tab's session storage and is sent only to this server.</p>
    <input type="password" aria-label="API key or token" autocomplete="off" value=${value} onInput=${(e) => setValue(e.target.value)} />
    <button class="primary" type="submit">Use it</button>
  </form>`;
}

function App() {
  const [hash, setHash] = useState(location.hash);
  const [needKey, setNeedKey] = useState(false);
  const [epoch, setEpoch] = useState(0); // remounts the page after sign-in
  useEffect(() => {
    const f = () => setHash(location.hash);
    addEventListener('hashchange', f);
    // Effects run after the first paint: a link followed before then
    // changed the hash with nobody listening, so read it again now.
    f();
    const off = onUnauthorized(() => setNeedKey(true));
    return () => { removeEventListener('hashchange', f); off(); };
  }, []);
  const r = route(hash);
  const nav = [['agents', 'Agents'], ['assistants', 'Assistants'], ['runs', 'Runs'], ['inbox', 'Inbox'], ['schedules', 'Schedules'], ['server', 'Server']];
  const signOut = () => { credential.set(''); sessionStorage.clear(); setEpoch(epoch + 1); };
  return html`<header class="top">
      <a class="brand" href="#/agents">agentd</a>
      <nav aria-label="Pages">${nav.map(([p, label]) => html`<a key=${p} href=${`#/${p}`} aria-current=${r.page === p || (p === 'agents' && r.page === 'chat') ? 'page' : undefined}>${label}</a>`)}</nav>
      ${credential.get() ? html`<button class="link" onClick=${signOut}>Forget key</button>` : null}
    </header>
    ${needKey ? html`<${SignIn} onDone=${() => { setNeedKey(false); setEpoch(epoch + 1); }} />` : null}
    <main key=${`${hash}|${epoch}`}><${Page} r=${r} /></main>`;
}

const root = document.getElementById('app');
root.textContent = ''; // the boot note
render(html`<${App} />`, root);
