// The demo's goal agent (a planner, an approval, a workflow) through the
// ecosystem's own clients, pinned in package.json: @ag-ui/client's
// HttpAgent, the `ai` package's chat transport, @langchain/langgraph-sdk
// and @modelcontextprotocol/sdk. Each sees the plan and answers the
// approval its way; the plan then runs.
// Usage: AGENTD_URL=http://127.0.0.1:8080 node goal.mjs [check …]
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import { DefaultChatTransport, readUIMessageStream } from 'ai';
import { Client as LangGraph } from '@langchain/langgraph-sdk';
import { Client as MCP } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const base = process.env.AGENTD_URL;
if (!base) throw new Error('AGENTD_URL is not set');
const goal = 'tell me the time twice';
const stepIds = ['clock', 'repeat'];

// AG-UI: the plan is the run's state (STATE_SNAPSHOT), the approval an
// interrupt answered with resume; the state then follows the steps.
async function agui() {
  const a = new HttpAgent({ url: `${base}/ag-ui/agents/goal`, threadId: randomUUID() });
  a.addMessage({ id: randomUUID(), role: 'user', content: goal });
  let finished;
  await a.runAgent({ runId: randomUUID() }, { onRunFinishedEvent: ({ event }) => { finished = event; } });
  assert.equal(finished.outcome.type, 'interrupt');
  assert.equal(a.state.plan.goal, true, 'the proposed plan is the state');
  assert.deepEqual(a.state.plan.steps.map((s) => s.id), stepIds);
  assert.equal(a.state.plan.document.name, 'time-report');
  const [intr] = finished.outcome.interrupts;
  assert.equal(intr.reason, 'tool_approval');
  assert.match(intr.message, /run_workflow .*time-report/);
  await a.runAgent({ runId: randomUUID(), resume: [{ interruptId: intr.id, status: 'resolved', payload: { decision: 'approve' } }] },
    { onRunFinishedEvent: ({ event }) => { finished = event; } });
  assert.equal(finished.outcome.type, 'success');
  for (const id of stepIds) assert.equal(a.state.steps[id].status, 'completed', `step ${id}`);
  return 'AG-UI: plan state, interrupt, resume';
}

// The AI SDK stream: the plan is a data-plan part, the approval an
// interrupt part, answered by the next message of the chat.
async function aisdk() {
  const transport = new DefaultChatTransport({ api: `${base}/ai-sdk/agents/goal/chat` });
  const chatId = randomUUID();
  const send = async (text) => {
    const stream = await transport.sendMessages({ chatId, messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }], trigger: 'submit-message' });
    let m;
    for await (const x of readUIMessageStream({ stream, onError: (e) => { throw e; } })) m = x;
    return m;
  };
  const asked = await send(goal);
  const plan = asked.parts.find((p) => p.type === 'data-plan');
  assert.ok(plan, `no plan part among ${asked.parts.map((p) => p.type)}`);
  assert.deepEqual(plan.data.steps.map((s) => s.id), stepIds);
  const interrupt = asked.parts.find((p) => p.type === 'data-agentd-interrupt');
  assert.equal(interrupt?.data.interrupts[0].reason, 'tool_approval');
  const done = await send('approve');
  const text = done.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  assert.match(text, /It is /, 'the answer carries the clock step');
  return 'AI SDK: data-plan, interrupt, approve';
}

// The Agent Protocol: the plan streams as a custom event, the approval is
// an __interrupt__ answered with command.resume.
async function langgraph() {
  const client = new LangGraph({ apiUrl: base + '/lg', callerOptions: { maxRetries: 0 } });
  const th = await client.threads.create();
  const parts = [];
  for await (const p of client.runs.stream(th.thread_id, 'goal', { input: { messages: [{ role: 'user', content: goal }] }, streamMode: ['custom', 'values'] })) parts.push(p);
  const plan = parts.find((p) => p.event === 'custom' && p.data.type === 'plan');
  assert.ok(plan, 'the plan streams as custom');
  assert.equal(plan.data.plan.document.name, 'time-report');
  const values = parts.filter((p) => p.event === 'values').at(-1).data;
  assert.equal(values.__interrupt__[0].value.action_request.action, 'run_workflow');
  const out = await client.runs.wait(th.thread_id, 'goal', { command: { resume: [{ type: 'accept' }] } });
  assert.equal(out.__interrupt__, undefined);
  assert.match(out.messages.at(-1).content, /It is /);
  return 'Agent Protocol: custom plan, interrupt, accept';
}

// MCP: the approval is an elicitation naming the plan.
async function mcp() {
  const client = new MCP({ name: 'agentd-goal', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return { action: 'accept', content: { approve: true } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(base + '/mcp')));
  const res = await client.callTool({ name: 'goal', arguments: { message: goal } });
  assert.equal(res._meta['agentd/status'], 'completed', JSON.stringify(res));
  assert.equal(asked.length, 1);
  assert.match(asked[0], /run_workflow\(.*"name":"time-report"/);
  await client.close();
  return 'MCP: elicitation with the plan';
}

const all = { agui, aisdk, langgraph, mcp };
const only = process.argv.slice(2);
for (const [name, f] of Object.entries(all)) {
  if (only.length && !only.includes(name)) continue;
  console.log('ok', await f());
}
