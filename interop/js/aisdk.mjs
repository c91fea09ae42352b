// The AI SDK UI message stream face of agentd driven by the `ai` package
// (pinned in package.json): its DefaultChatTransport posts the useChat body
// and reconnects as useChat({resume: true}) does; readUIMessageStream
// assembles the messages. Usage: AGENTD_URL=http://127.0.0.1:8080 node aisdk.mjs
import { DefaultChatTransport, readUIMessageStream } from 'ai';
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';

const base = process.env.AGENTD_URL;
if (!base) throw new Error('AGENTD_URL is not set');

const transport = (agent) => new DefaultChatTransport({ api: `${base}/ai-sdk/agents/${agent}/chat` });

const userMessage = (text) => ({ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] });

// last reads a UI message stream to its end and returns the final message.
async function last(stream, onChunk) {
  let message;
  const tee = onChunk ? stream.pipeThrough(new TransformStream({ transform(c, ctl) { onChunk(c); ctl.enqueue(c); } })) : stream;
  for await (const m of readUIMessageStream({ stream: tee, onError: (e) => { throw e; } })) message = m;
  return message;
}

const textOf = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');

async function send(agent, chatId, text, abortSignal) {
  return transport(agent).sendMessages({ chatId, messages: [userMessage(text)], trigger: 'submit-message', messageId: undefined, abortSignal });
}

async function echo() {
  const m = await last(await send('echo', randomUUID(), 'hello there'));
  assert.equal(m.role, 'assistant');
  assert.equal(textOf(m), 'hello there');
  return 'echo';
}

async function toolCall() {
  const m = await last(await send('assistant', randomUUID(), 'calculate 2*(3+4)'));
  const tool = m.parts.find((p) => p.type === 'dynamic-tool');
  assert.equal(tool.toolName, 'calculator');
  assert.equal(tool.state, 'output-available');
  assert.deepEqual(tool.input, { expression: '2*(3+4)' });
  assert.equal(tool.output, '14');
  assert.equal(textOf(m), 'The result is 14.');
  return 'tool call';
}

async function resumeAfterCut() {
  const chatId = randomUUID();
  const ctl = new AbortController();
  const stream = await send('echo', chatId, 'stream 40 every 20ms', ctl.signal);
  const reader = stream.getReader();
  let deltas = 0;
  while (deltas < 5) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream ended before the cut');
    if (value.type === 'text-delta') deltas++;
  }
  ctl.abort(); // the cut: the run goes on without its client
  await reader.cancel().catch(() => {});
  const resumed = await transport('echo').reconnectToStream({ chatId });
  assert.ok(resumed, 'an active run to resume');
  const m = await last(resumed);
  const want = Array.from({ length: 40 }, (_, i) => `tok${i + 1}`).join(' ');
  assert.equal(textOf(m), want);
  // Once the run is over there is nothing to resume.
  assert.equal(await transport('echo').reconnectToStream({ chatId }), null);
  return 'resume after a cut';
}

async function approval() {
  const chatId = randomUUID();
  const asked = await last(await send('guarded', chatId, 'delete notes.txt'));
  const interrupt = asked.parts.find((p) => p.type === 'data-agentd-interrupt');
  assert.equal(interrupt?.data.type, 'interrupt', 'the run waits for an approval');
  assert.equal(interrupt.data.interrupts[0].reason, 'tool_approval');
  // The next message in the chat answers it; the same run goes on.
  const m = await last(await send('guarded', chatId, 'approve'));
  assert.equal(textOf(m), 'The tool answered: deleted notes.txt');
  return 'approval in the chat';
}

async function reasoning() {
  // "think about X": the assistant's thinking is a reasoning part of the
  // message, before its text.
  const m = await last(await send('assistant', randomUUID(), 'think about the weather'));
  const i = m.parts.findIndex((p) => p.type === 'reasoning');
  assert.ok(i >= 0, 'no reasoning part');
  assert.match(m.parts[i].text, /^The question is about the weather\./);
  assert.equal(m.parts[i].state, 'done');
  assert.ok(i < m.parts.findIndex((p) => p.type === 'text'), 'the reasoning comes before the text');
  assert.equal(textOf(m), 'I thought about the weather: I can tell you the time or calculate something.');
  return 'reasoning';
}

const only = process.argv.slice(2);
const all = { echo, toolCall, resumeAfterCut, approval, reasoning };
for (const [name, f] of Object.entries(all)) {
  if (only.length && !only.includes(name)) continue;
  console.log('ok', await f());
}
