// The AG-UI face of agentd driven by the official client: @ag-ui/client's
// HttpAgent (pinned in package.json), whose own event verification checks
// every stream. Usage: AGENTD_URL=http://127.0.0.1:8080 node agui.mjs
import { HttpAgent } from '@ag-ui/client';
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';

const base = process.env.AGENTD_URL;
if (!base) throw new Error('AGENTD_URL is not set');

function agent(id, threadId = randomUUID()) {
  return new HttpAgent({ url: `${base}/ag-ui/agents/${id}`, threadId });
}

// run sends text (when given) and runs the agent, recording every event.
async function run(a, text, opts = {}) {
  if (text !== undefined) a.addMessage({ id: randomUUID(), role: 'user', content: text });
  const events = [];
  let finished;
  const res = await a.runAgent({ runId: randomUUID(), ...opts }, {
    onEvent: ({ event }) => { events.push(event); },
    onRunFinishedEvent: ({ event }) => { finished = event; },
  });
  return { ...res, events, finished, types: events.map((e) => e.type) };
}

const lastText = (a) => [...a.messages].reverse().find((m) => m.role === 'assistant' && m.content)?.content;

async function echo() {
  const a = agent('echo');
  const r = await run(a, 'hello there');
  assert.equal(r.types[0], 'RUN_STARTED');
  assert.equal(r.types.at(-1), 'RUN_FINISHED');
  assert.equal(r.finished.outcome.type, 'success');
  assert.ok(r.types.includes('MESSAGES_SNAPSHOT'));
  assert.equal(lastText(a), 'hello there');
  // A second turn in the same thread continues the conversation.
  const r2 = await run(a, 'again');
  assert.equal(lastText(a), 'again');
  assert.equal(a.messages.filter((m) => m.role === 'user').length, 2, 'the snapshot keeps the thread');
  assert.equal(r2.finished.outcome.type, 'success');
  return 'echo';
}

async function toolCall() {
  const a = agent('assistant');
  const r = await run(a, 'calculate 2*(3+4)');
  for (const t of ['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT', 'STEP_STARTED', 'STEP_FINISHED']) {
    assert.ok(r.types.includes(t), `missing ${t}`);
  }
  const call = a.messages.find((m) => m.role === 'assistant' && m.toolCalls?.length)?.toolCalls[0];
  assert.equal(call.function.name, 'calculator');
  assert.deepEqual(JSON.parse(call.function.arguments), { expression: '2*(3+4)' });
  const result = a.messages.find((m) => m.role === 'tool');
  assert.equal(result.content, '14');
  assert.equal(result.toolCallId, call.id);
  assert.equal(lastText(a), 'The result is 14.');
  return 'tool call';
}

async function interruptAndResume() {
  const a = agent('guarded');
  const r = await run(a, 'delete notes.txt');
  assert.equal(r.finished.outcome.type, 'interrupt');
  const [intr] = r.finished.outcome.interrupts;
  assert.equal(intr.reason, 'tool_approval');
  assert.ok(intr.toolCallId && intr.message && intr.responseSchema);
  const r2 = await run(a, undefined, { resume: [{ interruptId: intr.id, status: 'resolved', payload: { decision: 'approve' } }] });
  assert.equal(r2.finished.outcome.type, 'success');
  assert.equal(lastText(a), 'The tool answered: deleted notes.txt');
  assert.ok(!a.messages.some((m) => m.role === 'user' && String(m.content).includes('approvals')), 'an answer to interrupts is no message');
  assert.equal(a.messages.find((m) => m.role === 'tool')?.content, 'deleted notes.txt');
  // Rejecting instead: the tool does not run.
  const b = agent('guarded');
  const r3 = await run(b, 'delete other.txt');
  const r4 = await run(b, undefined, { resume: [{ interruptId: r3.finished.outcome.interrupts[0].id, status: 'resolved', payload: false }] });
  assert.equal(r4.finished.outcome.type, 'success');
  assert.match(lastText(b), /rejected/);
  return 'interrupt + resume';
}

async function research() {
  const a = agent('research');
  const r = await run(a, 'quantum computing');
  assert.equal(r.finished.outcome.type, 'success');
  assert.ok(r.types.includes('STATE_SNAPSHOT') && r.types.includes('STATE_DELTA'));
  const steps = a.state.plan.steps.map((s) => s.id);
  assert.deepEqual(steps, ['plan', 'history', 'technology', 'impact', 'write', 'review', 'publish']);
  for (const id of steps) assert.equal(a.state.steps[id].status, 'completed', `step ${id}`);
  assert.match(lastText(a), /^Final report on quantum computing/);
  return 'research workflow state';
}

// The team demo: the coordinator's messages, the researchers' reports and
// the shared memory writes arrive as CUSTOM agentd.workflow events; the
// answer is the coordinator's summary.
async function team() {
  const a = agent('team');
  const r = await run(a, 'the moons of Jupiter');
  assert.equal(r.finished.outcome.type, 'success');
  const kinds = r.events.filter((e) => e.type === 'CUSTOM' && e.name === 'agentd.workflow').map((e) => e.value.kind);
  for (const k of ['coordinator_message', 'coordinator_inbox_message', 'shared_memory_write', 'coordinator_synthesis']) {
    assert.ok(kinds.includes(k), `a workflow event ${k} among ${kinds}`);
  }
  assert.match(lastText(a), /^Summary on the moons of Jupiter:/);
  return 'team workflow with a coordinator';
}

async function cancel() {
  const threadId = randomUUID();
  const a = agent('echo', threadId);
  a.addMessage({ id: randomUUID(), role: 'user', content: 'stream 200 every 20ms' });
  const runId = randomUUID();
  let cancelled = false;
  const done = a.runAgent({ runId }, {
    onTextMessageContentEvent: async () => {
      if (cancelled) return;
      cancelled = true;
      const res = await fetch(`${base}/ag-ui/agents/echo/threads/${threadId}/runs/${runId}/cancel`, { method: 'POST' });
      assert.ok(res.status === 200 || res.status === 202, `cancel: ${res.status}`);
    },
    onRunFinishedEvent: ({ event }) => { a.finishedOutcome = event.outcome; },
  });
  await done;
  assert.equal(a.finishedOutcome.type, 'cancelled');
  return 'cancel';
}

async function frontendTool() {
  const a = agent('assistant');
  const tools = [{ name: 'confirm', description: 'Ask the person to confirm.', parameters: { type: 'object', properties: { question: { type: 'string' } } } }];
  const r = await run(a, 'please confirm the order', { tools });
  assert.equal(r.finished.outcome.type, 'success');
  const pending = r.finished.outcome.pendingToolCallIds;
  assert.equal(pending?.length, 1, 'one pending frontend tool call');
  const call = a.messages.find((m) => m.toolCalls?.some((c) => c.id === pending[0])).toolCalls[0];
  assert.equal(call.function.name, 'confirm');
  a.addMessage({ id: randomUUID(), role: 'tool', toolCallId: call.id, content: 'yes' });
  const r2 = await run(a, undefined, { tools });
  assert.equal(r2.finished.outcome.type, 'success');
  assert.equal(lastText(a), 'The person answered: yes');
  const answers = a.messages.filter((m) => m.role === 'tool' && m.toolCallId === call.id);
  assert.equal(answers.length, 1, 'the thread keeps the one tool result');
  assert.equal(answers[0].content, 'yes');
  return 'frontend tool';
}

async function reasoning() {
  // The demo assistant's "think about X" streams its thinking first: one
  // reasoning span, then the answer's text message.
  const a = agent('assistant');
  const r = await run(a, 'think about the weather');
  const kinds = r.types.filter((t) => t.startsWith('REASONING') || t.startsWith('TEXT_MESSAGE_START'));
  assert.deepEqual(kinds.slice(0, 3), ['REASONING_START', 'REASONING_MESSAGE_START', 'REASONING_MESSAGE_CONTENT']);
  assert.ok(r.types.indexOf('REASONING_END') < r.types.indexOf('TEXT_MESSAGE_START'), 'reasoning ends before the answer');
  const thought = r.events.filter((e) => e.type === 'REASONING_MESSAGE_CONTENT').map((e) => e.delta).join('');
  assert.match(thought, /^The question is about the weather\./);
  assert.equal(lastText(a), 'I thought about the weather: I can tell you the time or calculate something.');
  return 'reasoning';
}

async function questions() {
  // A flow asks three questions; each answer is a resume entry, and the
  // same agentd run goes on to the refund.
  const a = agent('refund');
  let r = await run(a, 'I want a refund');
  for (const answer of ['A-1001', 'damaged', 'yes']) {
    assert.equal(r.finished.outcome.type, 'interrupt');
    const [q] = r.finished.outcome.interrupts;
    assert.equal(q.reason, 'input_required');
    assert.ok(q.message && q.responseSchema);
    r = await run(a, undefined, { resume: [{ interruptId: q.id, status: 'resolved', payload: answer }] });
  }
  assert.equal(r.finished.outcome.type, 'success');
  assert.match(lastText(a), /^Done: refund R-\d+ of 42.5 EUR/);
  // Abandoning a question cancels the run.
  const b = agent('refund');
  const q = (await run(b, 'I want a refund')).finished.outcome.interrupts[0];
  const c = await run(b, undefined, { resume: [{ interruptId: q.id, status: 'cancelled' }] });
  assert.equal(c.finished.outcome.type, 'cancelled');
  return 'questions (a flow)';
}

// rejected runs the agent and returns the HttpAgent's error (it must fail).
async function rejected(a, text, opts) {
  try {
    await run(a, text, opts);
  } catch (err) {
    return err;
  }
  assert.fail('the run was not refused');
}

async function runIdReuse() {
  // A runId that answered one thread's interrupts names that run: a new
  // run, or a resume, with it in another thread is refused (409 naming
  // runId) and stores nothing there.
  const a = agent('guarded');
  const first = await run(a, 'delete notes.txt');
  const runId = randomUUID();
  const resumed = await run(a, undefined, { runId, resume: [{ interruptId: first.finished.outcome.interrupts[0].id, status: 'resolved', payload: { decision: 'approve' } }] });
  assert.equal(resumed.finished.outcome.type, 'success');
  const again = await run(a, undefined, { runId, resume: [{ interruptId: first.finished.outcome.interrupts[0].id, status: 'resolved', payload: { decision: 'approve' } }] });
  assert.equal(again.finished.outcome.type, 'success', 'the same runId in its own thread replays that run');

  const b = agent('echo');
  const err = await rejected(b, 'hello', { runId });
  assert.equal(err.status, 409, `a new run reusing the runId: ${err.message}`);
  assert.match(err.message, /runId/);
  assert.match(err.message, /another thread/);
  const fresh = await run(b, undefined);
  const snapshot = fresh.events.find((e) => e.type === 'MESSAGES_SNAPSHOT');
  assert.equal(snapshot.messages.filter((m) => m.role === 'user').length, 1, 'the refused run stored nothing');

  const c = agent('guarded');
  const parked = await run(c, 'delete other.txt');
  const err2 = await rejected(c, undefined, { runId, resume: [{ interruptId: parked.finished.outcome.interrupts[0].id, status: 'resolved', payload: false }] });
  assert.equal(err2.status, 409, `a resume reusing the runId: ${err2.message}`);
  const still = await run(c, undefined, { resume: [{ interruptId: parked.finished.outcome.interrupts[0].id, status: 'resolved', payload: false }] });
  assert.equal(still.finished.outcome.type, 'success', 'the refused resume left the run waiting');
  return 'runId reuse';
}

async function effects() {
  // The scout's peer tool has effects (keyed): its call's intent and result
  // reach the client as CUSTOM agentd.effect.* events, under one key.
  const a = agent('scout');
  const r = await run(a, 'ask the peer hello');
  assert.equal(r.finished.outcome.type, 'success');
  const fx = r.events.filter((e) => e.type === 'CUSTOM' && e.name.startsWith('agentd.effect.'));
  assert.deepEqual(fx.map((e) => e.name), ['agentd.effect.intent', 'agentd.effect.result']);
  assert.equal(fx[0].value.tool, 'ask_echo');
  assert.ok(fx[0].value.key && fx[0].value.key === fx[1].value.key, 'one effect key');
  assert.match(fx[1].value.content, /hello/);
  return 'effects';
}

const only = process.argv.slice(2);
const all = { echo, toolCall, interruptAndResume, questions, research, team, cancel, frontendTool, reasoning, runIdReuse, effects };
for (const [name, f] of Object.entries(all)) {
  if (only.length && !only.includes(name)) continue;
  console.log('ok', await f());
}
