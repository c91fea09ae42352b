// Chat: talk to one agent. The answer streams from the run's event log;
// the conversation's transcript comes from /v1/contexts/{id}/messages;
// the sidebar lists the agent's conversations to reopen.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api, follow } from '../api.js';
import { answered, apply, load, newLive, question, save } from '../live.js';
import { shownText, terminal, textOf } from '../format.js';
import { ErrorNote, Status } from '../components/common.js';
import { Transcript, LiveRun } from '../components/transcript.js';
import { Composer } from '../components/composer.js';
import { Conversations } from '../components/conversations.js';
import { Controls } from '../components/controls.js';
import { Answer, Approvals } from '../components/approvals.js';

export function Chat({ agentId, contextId }) {
  const [agent, setAgent] = useState(null);
  const [transcript, setTranscript] = useState([]);
  const [live, setLive] = useState(null);
  const [error, setError] = useState(null);
  const [following, setFollowing] = useState(0); // bumped to (re)attach the stream
  const liveRef = useRef(null);
  liveRef.current = live;

  const reloadTranscript = () => contextId && api.transcript(contextId).then((t) => {
    setTranscript(t.messages);
    return t.messages;
  }, (e) => { if (e.status !== 404) setError(e); return []; });

  useEffect(() => { api.agents().then((l) => setAgent(l.agents.find((a) => a.id === agentId) || { id: agentId, name: agentId }), setError); }, [agentId]);

  // Open the conversation: its transcript, and the run still going on in
  // it, resumed after the last event this tab showed (or from its start).
  useEffect(() => {
    setTranscript([]); setLive(null); setError(null);
    if (!contextId) return;
    const saved = load(contextId);
    Promise.all([reloadTranscript(), api.runs({ context: contextId, limit: 1 })]).then(([msgs, { runs }]) => {
      const newest = runs[0];
      if (saved && (!newest || saved.runId === newest.id)) setLive(saved);
      else if (newest && !terminal(newest.status)) {
        const mine = msgs.filter((m) => m.task_id === newest.id && m.role === 'user').map(shownText);
        setLive(newLive(newest.id, mine[0], mine.slice(1)));
      } else return;
      setFollowing((n) => n + 1);
    }, setError);
  }, [contextId]);

  // Follow the live run's events from lastSeq until the stream closes.
  useEffect(() => {
    const l = liveRef.current;
    if (!following || !l || (l.ended && terminal(l.ended))) return undefined;
    const ctl = new AbortController();
    const onBatch = (evs) => setLive((cur) => {
      const next = apply(cur, evs);
      save(contextId, next);
      return next;
    });
    follow(l.runId, l.lastSeq, onBatch, ctl.signal).then(
      () => { reloadTranscript(); api.run(l.runId).then((r) => setLive((cur) => ({ ...cur, status: r.status }))).catch(() => {}); },
      (e) => { if (e.name !== 'AbortError') setError(e); },
    );
    return () => ctl.abort();
  }, [following]);

  const start = (run, userText) => {
    const l = newLive(run.id, userText);
    save(run.context_id, l);
    if (run.context_id !== contextId) {
      location.hash = `#/chat/${encodeURIComponent(agentId)}?context=${encodeURIComponent(run.context_id)}`;
      return;
    }
    setLive(l);
    setFollowing((n) => n + 1);
  };

  const send = async (body, userText) => {
    setError(null);
    try {
      start(await api.send(agentId, contextId ? { ...body, context_id: contextId } : body), userText);
    } catch (e) { setError(e); }
  };

  // answer posts to the waiting run and follows its next attempt.
  const answer = async (body, shown) => {
    setError(null);
    try {
      await api.input(live.runId, body);
      setLive((cur) => {
        const next = { ...answered(cur, shown), status: 'working', ended: null };
        save(contextId, next);
        return next;
      });
      setFollowing((n) => n + 1);
    } catch (e) { setError(e); }
  };

  const q = live && question(live);
  return html`<div class="chat">
    <${Conversations} agentId=${agentId} current=${contextId} />
    <section class="conversation" aria-label="Conversation">
      <header class="chat-head"><h1>${agent ? agent.name : agentId}</h1>
        ${live ? html`<${Status} status=${live.status} /> <a href=${`#/runs/${live.runId}`}>run</a>` : null}</header>
      <${ErrorNote} error=${error} />
      <${Transcript} messages=${transcript} hideRun=${live && live.runId} />
      ${live ? html`<${LiveRun} live=${live} />` : null}
      ${q ? html`<${QuestionBox} q=${q} answer=${answer} />` : null}
      ${live && !terminal(live.status) ? html`<${Controls} live=${live} onError=${setError} onResumed=${() => setFollowing((n) => n + 1)} />` : null}
      <${Composer} agent=${agent} onSend=${send} busy=${!!(live && !terminal(live.status) && live.status !== 'input-required' && live.status !== 'paused')} />
    </section>
  </div>`;
}


function QuestionBox({ q, answer }) {
  if (q.approvals.length) {
    return html`<div class="ask"><p class="question">${textOf(q.prompt).split('\n')[0]}</p>
      <${Approvals} approvals=${q.approvals} onAnswer=${(approvals) => answer({ approvals }, approvals.map((a) => `${a.decision} ${a.call_id}`).join(', '))} /></div>`;
  }
  return html`<div class="ask"><${Answer} onAnswer=${(text) => answer({ text }, text)} /></div>`;
}
