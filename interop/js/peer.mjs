// An A2A peer built on the official @a2a-js/sdk server (its
// DefaultRequestHandler and JSON-RPC transport handler, on node's own
// http server — the SDK's express adapter needs express, which this
// package does not install). agentd's remote engine talks to it in
// internal/engine/remote's JS peer test.
//
// Behaviours, by the user message's text:
//   stream N   N text chunks "tokI " on one artifact, then completed;
//   ask        input-required ("What is your name?"); the answer NAME
//              completes the task with "Hello, NAME";
//   slow       a chunk every 50 ms, up to 200, until canceled;
//   fail       failed, with the reason "the JS peer failed on purpose";
//   anything else is echoed back.
//
// Usage: node peer.mjs — listens on 127.0.0.1, a free port, and prints
// "listening <base URL>" once it does. Stops on SIGTERM or stdin's end.
import http from 'node:http';
import { randomUUID } from 'node:crypto';

import { Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler,
  UnauthenticatedUser, defaultServerCallContextBuilder,
} from '@a2a-js/sdk/server';

const text = (t) => ({ content: { $case: 'text', value: t } });
const textOf = (m) => (m?.parts ?? []).map((p) => (p?.content?.$case === 'text' ? p.content.value : '')).join('');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function agentMessage(taskId, contextId, t) {
  return { messageId: randomUUID(), role: Role.ROLE_AGENT, parts: [text(t)], taskId, contextId, extensions: [], referenceTaskIds: [] };
}

class PeerExecutor {
  canceled = new Set();

  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const input = textOf(ctx.userMessage).trim();
    const status = (state, msg) => bus.publish(AgentEvent.statusUpdate({
      taskId, contextId, status: { state, message: msg ? agentMessage(taskId, contextId, msg) : undefined }, metadata: undefined,
    }));
    const chunk = (t, append, last) => bus.publish(AgentEvent.artifactUpdate({
      taskId, contextId, append, lastChunk: last, metadata: undefined,
      artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [text(t)], metadata: undefined, extensions: [] },
    }));
    const task = ctx.task ?? { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED }, artifacts: [], history: [ctx.userMessage], metadata: undefined };
    bus.publish(AgentEvent.task(task));
    status(TaskState.TASK_STATE_WORKING);

    if (ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      chunk('Hello, ' + input, false, true);
      status(TaskState.TASK_STATE_COMPLETED);
    } else if (/^stream \d+$/.test(input)) {
      const n = Number(input.split(' ')[1]);
      for (let i = 1; i <= n; i++) chunk('tok' + i + ' ', i > 1, i === n);
      status(TaskState.TASK_STATE_COMPLETED);
    } else if (input === 'ask') {
      status(TaskState.TASK_STATE_INPUT_REQUIRED, 'What is your name?');
    } else if (input === 'slow') {
      for (let i = 1; i <= 200 && !this.canceled.has(taskId); i++) {
        chunk('tok' + i + ' ', i > 1, false);
        await sleep(50);
      }
      if (!this.canceled.has(taskId)) status(TaskState.TASK_STATE_COMPLETED);
    } else if (input === 'fail') {
      status(TaskState.TASK_STATE_FAILED, 'the JS peer failed on purpose');
    } else {
      chunk(input, false, true);
      status(TaskState.TASK_STATE_COMPLETED);
    }
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    this.canceled.add(taskId);
    bus.publish(AgentEvent.statusUpdate({
      taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED }, metadata: undefined,
    }));
    bus.finished();
  }
}

function card(base) {
  return {
    name: 'JS peer', description: 'An @a2a-js/sdk agent for agentd federation tests.', version: '1.0.0',
    supportedInterfaces: [{ url: base + '/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
    skills: [{ id: 'peer', name: 'Peer', description: 'Streams, asks, fails or echoes.', tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    securitySchemes: {}, securityRequirements: [], signatures: [],
  };
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

async function serveRPC(rpc, req, res) {
  const body = JSON.parse(await readBody(req));
  const context = defaultServerCallContextBuilder({
    extensions: undefined, user: new UnauthenticatedUser(), headers: req.headers,
    requestedVersion: req.headers['a2a-version'],
  });
  const out = await rpc.handle(body, context);
  if (typeof out?.[Symbol.asyncIterator] !== 'function') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(out));
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  try {
    for await (const ev of out) res.write('data: ' + JSON.stringify(ev) + '\n\n');
  } catch (err) {
    const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
    res.write('event: error\ndata: ' + JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, error }) + '\n\n');
  }
  res.end();
}

let rpc;
let base;
const server = http.createServer(async (req, res) => {
  try {
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(card(base)));
    } else if (req.method === 'POST' && req.url === '/a2a/jsonrpc') {
      await serveRPC(rpc, req, res);
    } else {
      res.writeHead(404).end();
    }
  } catch (err) {
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(String(err));
  }
});

server.listen(0, '127.0.0.1', () => {
  base = 'http://127.0.0.1:' + server.address().port;
  rpc = new JsonRpcTransportHandler(new DefaultRequestHandler(card(base), new InMemoryTaskStore(), new PeerExecutor()));
  console.log('listening ' + base);
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
