// Drives agentd's MCP endpoint with the official @modelcontextprotocol/sdk
// client (protocol 2025-11-25, a legacy session): list tools, call echo,
// structured output (the test server's point agent), a streamed call with
// progress, the assistant with a tool call inside, a
// call answered through elicitation (a prompt and an approval), a cancel,
// a wrong argument type.
//
// Usage: AGENTD_URL=http://127.0.0.1:8080 node mcp.mjs
// Exits non-zero with a message naming the failed check.
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const base = process.env.AGENTD_URL;
assert.ok(base, 'AGENTD_URL is not set');

const textOf = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

async function connect(path, withElicitation) {
  const client = new Client({ name: 'agentd-interop', version: '1.0.0' },
    { capabilities: withElicitation ? { elicitation: {} } : {} });
  const asked = [];
  if (withElicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      if (req.params.message.startsWith('Approve')) {
        return { action: 'accept', content: { approve: true } };
      }
      return { action: 'accept', content: { answer: 'more input' } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(base + path)));
  return { client, asked };
}

const { client, asked } = await connect('/mcp', true);

// Tools: one per agent, with the card's description.
const { tools } = await client.listTools();
const echo = tools.find((t) => t.name === 'echo');
assert.ok(echo, `no echo tool among ${tools.map((t) => t.name)}`);
assert.match(echo.description, /Echoes your message back/);
assert.deepEqual(echo.inputSchema.required, ['message']);
const one = await connect('/mcp/agents/assistant', false);
assert.deepEqual((await one.client.listTools()).tools.map((t) => t.name), ['assistant']);
console.log('ok list tools:', tools.map((t) => t.name).join(', '));

// A call is a run; the conversation goes on with context_id.
let res = await client.callTool({ name: 'echo', arguments: { message: 'hello there' } });
assert.equal(textOf(res), 'hello there');
assert.equal(res._meta['agentd/status'], 'completed');
const contextId = res._meta['agentd/context_id'];
const run = await (await fetch(`${base}/v1/runs/${res._meta['agentd/run_id']}`)).json().catch(() => null);
res = await client.callTool({ name: 'echo', arguments: { message: 'again', context_id: contextId } });
assert.equal(res._meta['agentd/context_id'], contextId);
console.log('ok call echo', run ? '(visible on REST)' : '');

// Structured output: the agent's response schema is the tool's
// outputSchema, which the client checks the structured content against.
const point = tools.find((t) => t.name === 'point');
assert.deepEqual(point?.outputSchema?.required, ['width', 'height']);
res = await client.callTool({ name: 'point', arguments: { message: 'a point please' } });
assert.deepEqual(res.structuredContent, { width: 3, height: 4 });
console.log('ok structured output');

// Progress: tokens as notifications.
const progress = [];
res = await client.callTool({ name: 'echo', arguments: { message: 'stream 5 every 10ms' } }, undefined,
  { onprogress: (p) => progress.push(p) });
assert.equal(textOf(res), 'tok1 tok2 tok3 tok4 tok5');
const tokens = progress.map((p) => p.message).filter((m) => /^ ?tok/.test(m)).join('').trim();
assert.equal(tokens, 'tok1 tok2 tok3 tok4 tok5', `progress ${JSON.stringify(progress)}`);
for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress, 'progress does not increase');
console.log('ok progress:', progress.length, 'notifications');

// The assistant calls its calculator inside the run.
progress.length = 0;
res = await client.callTool({ name: 'assistant', arguments: { message: 'calculate 2*(3+4)' } }, undefined,
  { onprogress: (p) => progress.push(p) });
assert.equal(textOf(res), 'The result is 14.');
assert.ok(progress.some((p) => p.message === 'calling tool calculator'), `progress ${JSON.stringify(progress)}`);
console.log('ok assistant with a tool call');

// Input through elicitation: a prompt, then an approval.
res = await client.callTool({ name: 'conformance', arguments: { message: 'tck-input-required' } });
assert.equal(res._meta['agentd/status'], 'completed', textOf(res));
assert.match(asked[0], /Please provide more input/);
res = await client.callTool({ name: 'guarded', arguments: { message: 'delete notes.txt' } });
assert.equal(res._meta['agentd/status'], 'completed', textOf(res));
assert.match(textOf(res), /^The tool answered:/);
assert.match(asked[1], /delete_file/);
console.log('ok elicitation:', asked.length, 'questions');

// Without elicitation the result names the run that waits.
const plain = await connect('/mcp', false);
res = await plain.client.callTool({ name: 'conformance', arguments: { message: 'tck-input-required' } });
assert.equal(res._meta['agentd/status'], 'input-required');
assert.ok(textOf(res).includes(res._meta['agentd/run_id']), textOf(res));
console.log('ok input without elicitation names the run');

// Cancel: aborting the call cancels its run.
const ctl = new AbortController();
let runId;
const call = client.callTool({ name: 'echo', arguments: { message: 'stream 200 every 20ms' } }, undefined, {
  signal: ctl.signal,
  onprogress: (p) => { runId ??= p._meta?.['agentd/run_id']; if (runId) ctl.abort(); },
});
await assert.rejects(call);
assert.ok(runId, 'no progress named the run');
let state;
for (let i = 0; i < 100 && state !== 'canceled'; i++) {
  const r = await fetch(`${base}/v1/runs/${runId}`);
  state = r.ok ? (await r.json()).status : `HTTP ${r.status}`;
  if (state !== 'canceled') await new Promise((ok) => setTimeout(ok, 50));
}
assert.equal(state, 'canceled');
console.log('ok cancel');

// A wrong argument type is a tool error naming it.
res = await client.callTool({ name: 'echo', arguments: { message: 42 } });
assert.equal(res.isError, true);
assert.match(textOf(res), /arguments\.message: must be a string, got number/);
console.log('ok wrong argument type');

await Promise.all([client.close(), one.client.close(), plain.client.close()]);
