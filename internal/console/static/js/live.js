// A run as the chat shows it while it streams: its events folded into
// blocks (text per actor, tool calls with their results and verdicts,
// notes), its artifacts, its question and its status. The state is plain
// JSON, saved in sessionStorage after each batch so that a reloaded page
// resumes after the last event it showed (Last-Event-ID).

import { approvalsOf, pausedOf, textOf } from './format.js';

// newLive starts the view of run runId: first is the text of the message
// that started it, answers those of the user's answers to its questions
// (each shown when the attempt it resumed starts).
export const newLive = (runId, first, answers = []) => ({
  runId, lastSeq: 0, blocks: first ? [{ type: 'user', text: first }] : [], open: {}, artifacts: [],
  status: 'submitted', prompt: null, ended: null, answers, answered: 0,
});

// answered records an answer the user just sent to the waiting run.
export const answered = (l, text) => ({ ...l, answers: [...l.answers, text], prompt: null });

// apply folds events (in seq order) into a copy of live. An event at or
// before lastSeq was shown already and is skipped: nothing is doubled.
export function apply(live, events) {
  const l = { ...live, blocks: live.blocks.slice(), open: { ...live.open }, artifacts: live.artifacts.slice() };
  for (const ev of events) {
    if (ev.seq <= l.lastSeq) continue;
    l.lastSeq = ev.seq;
    step(l, ev);
  }
  return l;
}

function step(l, ev) {
  switch (ev.type) {
    case 'run.start':
      l.ended = null;
      l.prompt = null;
      if (ev.resumed === 'input' && l.answered < l.answers.length) {
        l.blocks.push({ type: 'user', text: l.answers[l.answered] });
        l.answered += 1;
      } else if (ev.attempt > 1) l.blocks.push({ type: 'note', text: `attempt ${ev.attempt}${ev.resumed ? ` (resumed: ${ev.resumed})` : ''}` });
      break;
    case 'delta':
      delta(l, ev);
      break;
    case 'step.complete':
    case 'step.error':
      delete l.open[ev.actor];
      break;
    case 'governance':
      tool(l, ev.payload.call_id, (b) => ({ ...b, verdicts: [...(b.verdicts || []), ev.payload] }));
      break;
    case 'progress':
      if (ev.text) tool(l, ev.call_id, (b) => ({ ...b, progress: (b.progress || '') + ev.text }));
      break;
    case 'artifact':
      artifact(l, ev);
      break;
    case 'input':
      l.prompt = ev.prompt;
      // An approval prompt is answered in its own box; a question stays
      // in the conversation.
      if (!approvalsOf(ev.prompt).length) l.blocks.push({ type: 'question', text: textOf(ev.prompt) });
      break;
    case 'handoff':
      l.blocks.push({ type: 'note', text: `handed off from ${ev.from} to ${ev.to}${ev.reason ? `: ${ev.reason}` : ''}`, run: ev.child_run_id });
      break;
    case 'signal':
      l.blocks.push({ type: 'note', text: `signal ${ev.signal}${ev.text ? `: ${ev.text}` : ''}` });
      break;
    case 'status':
      l.status = ev.state;
      if (ev.state === 'input-required' && pausedOf(ev.message)) {
        l.status = 'paused';
        l.prompt = null;
      } else if (ev.message && ev.state === 'input-required') l.prompt = ev.message;
      if (ev.error) l.blocks.push({ type: 'error', text: ev.error.message });
      break;
    case 'run.end':
      l.ended = ev.state;
      if (!(l.status === 'paused' && ev.state === 'input-required')) l.status = ev.state;
      l.open = {};
      break;
    default:
  }
}

function delta(l, ev) {
  const actor = ev.actor || '';
  if (ev.text) {
    let i = l.open[actor];
    if (i === undefined) {
      i = l.blocks.push({ type: 'text', actor, text: '' }) - 1;
      l.open[actor] = i;
    }
    l.blocks[i] = { ...l.blocks[i], text: l.blocks[i].text + ev.text };
  } else if (ev.tool_call) {
    delete l.open[actor];
    l.blocks.push({ type: 'tool', actor, call: ev.tool_call, result: null });
  } else if (ev.tool_result) {
    tool(l, ev.tool_result.tool_call_id, (b) => ({ ...b, result: ev.tool_result }));
  }
}

// tool updates the block of tool call id (the newest with that id).
function tool(l, id, f) {
  for (let i = l.blocks.length - 1; i >= 0; i--) {
    const b = l.blocks[i];
    if (b.type === 'tool' && b.call.id === id) {
      l.blocks[i] = f(b);
      return;
    }
  }
}

function artifact(l, ev) {
  const a = ev.artifact;
  const i = l.artifacts.findIndex((x) => x.id === a.id);
  if (i < 0) l.artifacts.push(a);
  else l.artifacts[i] = ev.append ? { ...l.artifacts[i], parts: [...l.artifacts[i].parts, ...a.parts] } : a;
}

// question is what a waiting run asks: its text and pending approvals.
export const question = (l) => (l.status === 'input-required' && l.prompt ? { prompt: l.prompt, approvals: approvalsOf(l.prompt) } : null);

const storeKey = (contextId) => `agentd.live.${contextId}`;

export function save(contextId, live) {
  try {
    sessionStorage.setItem(storeKey(contextId), JSON.stringify(live));
  } catch { /* full: the page still works, a reload replays from the start */ }
}

export function load(contextId) {
  const s = sessionStorage.getItem(storeKey(contextId));
  return s ? JSON.parse(s) : null;
}
