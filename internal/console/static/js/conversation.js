// useConversation is the state of one conversation in the chat: its
// transcript, its live run (folded by live.js, saved per conversation in
// sessionStorage) and the stream that feeds it, resumed after the last
// event shown.
import { useEffect, useRef, useState } from 'preact/hooks';
import { NetworkError, api, follow } from './api.js';
import { answered, apply, load, newLive, save } from './live.js';
import { shownText, terminal } from './format.js';

export function useConversation(agentId, contextId) {
  const [transcript, setTranscript] = useState([]);
  const [live, setLive] = useState(null);
  const [error, setError] = useState(null);
  const [following, setFollowing] = useState(0); // bumped to (re)attach the stream
  const liveRef = useRef(null);
  liveRef.current = live;
  const refollow = () => setFollowing((n) => n + 1);
  const update = (f) => setLive((cur) => {
    const next = f(cur);
    save(contextId, next);
    return next;
  });

  const reloadTranscript = () => contextId && api.transcript(contextId).then((t) => {
    setTranscript(t.messages);
    return t.messages;
  }, (e) => { if (e.status !== 404) setError(e); return []; });

  // Open the conversation: its transcript, and the run still going on in
  // it, resumed after the last event this tab showed (or from its start).
  useEffect(() => {
    if (!contextId) return;
    const saved = load(contextId);
    Promise.all([reloadTranscript(), api.runs({ context: contextId, limit: 1 })]).then(([msgs, { runs }]) => {
      const newest = runs[0];
      if (saved && (!newest || saved.runId === newest.id)) setLive(saved);
      else if (newest && !terminal(newest.status)) {
        const mine = msgs.filter((m) => m.task_id === newest.id && m.role === 'user').map(shownText);
        setLive(newLive(newest.id, mine[0], mine.slice(1)));
      } else return;
      refollow();
    }, setError);
  }, [contextId]);

  // Follow the live run's events from lastSeq until the stream closes.
  useEffect(() => {
    const l = liveRef.current;
    if (!following || !l || (l.ended && terminal(l.ended))) return undefined;
    const ctl = new AbortController();
    follow(l.runId, l.lastSeq, (evs) => update((cur) => apply(cur, evs)), ctl.signal).then(
      () => { reloadTranscript(); api.run(l.runId).then((r) => setLive((cur) => ({ ...cur, status: r.status })), () => {}); },
      (e) => {
        if (e.name === 'AbortError') return;
        if (e instanceof NetworkError) setTimeout(refollow, 1000); // the network: try again
        else setError(e);
      },
    );
    return () => ctl.abort();
  }, [following]);

  // send starts a run (in this conversation, or a new one: the page then
  // moves to it and resumes the saved state).
  const send = async (body, userText) => {
    setError(null);
    try {
      const run = await api.send(agentId, contextId ? { ...body, context_id: contextId } : body);
      const l = newLive(run.id, userText);
      save(run.context_id, l);
      if (run.context_id !== contextId) {
        location.hash = `#/chat/${encodeURIComponent(agentId)}?context=${encodeURIComponent(run.context_id)}`;
        return;
      }
      setLive(l);
      refollow();
    } catch (e) { setError(e); }
  };

  // answer posts to the waiting run and follows its next attempt.
  const answer = async (body, shown) => {
    setError(null);
    try {
      await api.input(live.runId, body);
      update((cur) => ({ ...answered(cur, shown), status: 'working', ended: null }));
      refollow();
    } catch (e) { setError(e); }
  };

  return { transcript, live, error, setError, send, answer, refollow };
}
