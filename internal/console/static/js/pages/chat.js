// Chat: talk to one agent. The answer streams from the run's event log
// (conversation.js); the sidebar lists the agent's conversations to
// reopen.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { useConversation } from '../conversation.js';
import { question } from '../live.js';
import { terminal, textOf } from '../format.js';
import { ErrorNote, Status } from '../components/common.js';
import { Transcript, LiveRun } from '../components/transcript.js';
import { Composer } from '../components/composer.js';
import { Conversations } from '../components/conversations.js';
import { Controls } from '../components/controls.js';
import { Answer, Approvals } from '../components/approvals.js';

export function Chat({ agentId, contextId, draft }) {
  const [agent, setAgent] = useState(null);
  const { transcript, live, error, setError, send, answer, refollow } = useConversation(agentId, contextId);
  useEffect(() => {
    api.agents().then((l) => setAgent(l.agents.find((a) => a.id === agentId) || { id: agentId, name: agentId }), setError);
  }, [agentId]);

  const q = live && question(live);
  const going = live && !terminal(live.status);
  const busy = !!(going && live.status !== 'input-required' && live.status !== 'paused');
  return html`<div class="chat">
    <${Conversations} agentId=${agentId} current=${contextId} />
    <section class="conversation" aria-label="Conversation">
      <header class="chat-head"><h1>${agent ? agent.name : agentId}</h1>
        ${live ? html`<${Status} status=${live.status} /> <a href=${`#/runs/${live.runId}`}>run</a>` : null}</header>
      <${ErrorNote} error=${error} />
      <${Transcript} messages=${transcript} hideRun=${live && live.runId} />
      ${live ? html`<${LiveRun} live=${live} />` : null}
      ${q ? html`<${QuestionBox} q=${q} answer=${answer} />` : null}
      ${going ? html`<${Controls} live=${live} onError=${setError} onResumed=${refollow} />` : null}
      <${Composer} agent=${agent} onSend=${send} busy=${busy} draft=${draft} />
    </section>
  </div>`;
}

// QuestionBox answers what the live run asks: its approvals, or a text.
function QuestionBox({ q, answer }) {
  if (q.approvals.length) {
    const shown = (approvals) => approvals.map((a) => `${a.decision} ${a.call_id}`).join(', ');
    return html`<div class="ask"><p class="question">${textOf(q.prompt).split('\n')[0]}</p>
      <${Approvals} approvals=${q.approvals} onAnswer=${(approvals) => answer({ approvals }, shown(approvals))} /></div>`;
  }
  return html`<div class="ask"><${Answer} onAnswer=${(text) => answer({ text }, text)} /></div>`;
}
