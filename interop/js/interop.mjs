// Drives agentd's A2A endpoints with the official @a2a-js/sdk client: card
// discovery, blocking send, streaming, resubscription with the
// resumable-stream cursor, push notifications to a loopback webhook,
// cancel and errors, over JSON-RPC and HTTP+JSON.
//
// Usage: AGENTD_URL=http://127.0.0.1:8080 node interop.mjs
// Exits non-zero with a message naming the failed check.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';
import { TaskNotFoundError, TaskNotCancelableError } from '@a2a-js/sdk/errors';

const base = process.env.AGENTD_URL;
assert.ok(base, 'AGENTD_URL is not set');

const EXT = 'https://agentd.dev/a2a/ext/resumable-stream/v1';
const SEQ = EXT + '#seq';

const text = (t) => ({ content: { $case: 'text', value: t } });
const message = (t, extra = {}) => ({ messageId: randomUUID(), role: Role.ROLE_USER, parts: [text(t)], ...extra });
const partText = (p) => (p?.content?.$case === 'text' ? p.content.value : '');

async function clientFor(path, transport) {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    preferredTransports: [transport],
  }));
  return factory.createFromUrl(base + path);
}

// drain collects a stream's payloads, stopping after `limit` when given.
async function drain(stream, limit = Infinity) {
  const out = [];
  for await (const ev of stream) {
    out.push(ev.payload ?? ev);
    if (out.length >= limit) break;
  }
  return out;
}

const answerOf = (events) => events
  .filter((e) => e.$case === 'artifactUpdate' && e.value.artifact?.name === 'answer')
  .map((e) => e.value.artifact.parts.map(partText).join(''))
  .join('');

const seqOf = (e) => Number(e.value?.metadata?.[SEQ] ?? 0);

// webhook is a push-notification receiver on loopback that records every
// request's path, headers and JSON body.
async function webhook() {
  const bodies = [];
  let wake = () => {};
  const server = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => { b += c; });
    req.on('end', () => {
      bodies.push({ path: req.url, headers: req.headers, body: JSON.parse(b) });
      res.writeHead(204).end();
      wake();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    bodies,
    until: (cond) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`webhook: condition not met after ${bodies.length} requests`)), 10000);
      wake = () => { if (cond(bodies)) { clearTimeout(timer); resolve(); } };
      wake();
    }),
    // agentd's webhook client keeps its connection alive: close it too, or
    // the server (and node) would wait for the client to hang up.
    close: () => { server.close(); server.closeAllConnections(); },
  };
}

async function run(transport) {
  const checks = [];
  const check = async (name, fn) => {
    try {
      await fn();
      checks.push(name);
    } catch (err) {
      err.message = `[${transport}] ${name}: ${err.message}`;
      throw err;
    }
  };

  const echo = await clientFor('', transport);
  await check('discover the default card', async () => {
    const card = await echo.getAgentCard();
    assert.equal(card.name, 'Echo');
    assert.ok(card.capabilities.streaming, 'streaming capability');
    assert.ok(card.capabilities.extensions.some((x) => x.uri === EXT), 'resumable-stream extension declared');
    assert.ok(card.supportedInterfaces.every((i) => i.protocolVersion), 'every interface declares protocolVersion');
  });

  await check('send', async () => {
    const task = await echo.sendMessage({ message: message('hello from js') });
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(partText(task.history.at(-1).parts[0]), 'hello from js');
    assert.equal(task.history.at(-1).role, Role.ROLE_AGENT);
  });

  await check('stream', async () => {
    const events = await drain(echo.sendMessageStream({ message: message('stream 8') }));
    assert.equal(events[0].$case, 'task', 'the Task comes first');
    assert.equal(answerOf(events), 'tok1 tok2 tok3 tok4 tok5 tok6 tok7 tok8');
    const status = events.filter((e) => e.$case === 'statusUpdate').at(-1);
    assert.equal(status.value.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.ok(events.slice(1).every((e) => seqOf(e) > 0), 'every update carries its seq');
  });

  await check('resubscribe after a dropped stream', async () => {
    const first = await drain(echo.sendMessageStream({ message: message('stream 30 every 5ms') }), 6);
    const taskId = first[0].value.id;
    const last = seqOf(first.at(-1));
    assert.ok(last > 0, 'seq of the last update received');
    const rest = await drain(echo.resubscribeTask({ id: taskId }, { serviceParameters: { 'Last-Event-ID': String(last) } }));
    assert.equal(rest[0].$case, 'task', 'the Task snapshot comes first');
    const seqs = rest.slice(1).map(seqOf);
    assert.ok(seqs[0] > last, `first resumed seq ${seqs[0]} after ${last}`);
    seqs.forEach((s, i) => i && assert.ok(s > seqs[i - 1], 'increasing seqs'));
    const full = Array.from({ length: 30 }, (_, i) => `tok${i + 1}`).join(' ');
    assert.equal(answerOf(first) + answerOf(rest), full, 'every token exactly once');
  });

  await check('push notifications', async () => {
    const hook = await webhook();
    try {
      const config = { url: hook.url, token: 'tok-js', authentication: { scheme: 'Bearer', credentials: 'cred' } };
      const started = await echo.sendMessage({
        message: message('stream 5 every 5ms'),
        configuration: { returnImmediately: true, taskPushNotificationConfig: config },
      });
      const more = await echo.createTaskPushNotificationConfig({ taskId: started.id, id: 'js-2', url: hook.url + '/2' });
      assert.equal(more.id, 'js-2');
      const listed = await echo.listTaskPushNotificationConfig({ taskId: started.id });
      assert.equal(listed.configs.length, 2, 'both configs listed');
      const got = await echo.getTaskPushNotificationConfig({ taskId: started.id, id: 'js-2' });
      assert.equal(got.url, hook.url + '/2');
      await echo.deleteTaskPushNotificationConfig({ taskId: started.id, id: 'js-2' });
      // Each webhook is delivered on its own: wait for this one's last update
      // (the second config's may come first).
      await hook.until((bodies) => bodies.some((b) => b.path === '/hook' && b.body.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED'));
      const first = hook.bodies.filter((b) => b.path === '/hook');
      assert.equal(first[0].headers['a2a-notification-token'], 'tok-js');
      assert.equal(first[0].headers['x-a2a-notification-token'], 'tok-js');
      assert.equal(first[0].headers.authorization, 'Bearer cred');
      const answer = first.map((b) => b.body.artifactUpdate?.artifact?.parts?.map((p) => p.text).join('') ?? '').join('');
      assert.equal(answer, 'tok1 tok2 tok3 tok4 tok5', 'every token delivered, in order');
    } finally {
      hook.close();
    }
  });

  const tck = await clientFor('/agents/conformance/', transport);
  await check('cancel', async () => {
    const task = await tck.sendMessage({ message: message('tck-cancel'), configuration: { returnImmediately: true } });
    assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status.state));
    const canceled = await tck.cancelTask({ id: task.id });
    assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
    const again = await tck.cancelTask({ id: task.id });
    assert.equal(again.status.state, TaskState.TASK_STATE_CANCELED, 'cancel is idempotent');
  });

  await check('multi-turn', async () => {
    const task = await tck.sendMessage({ message: message('tck-multi-turn') });
    assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const more = await tck.sendMessage({ message: message('42', { taskId: task.id }) });
    assert.equal(more.status.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'still asking until a message says done');
    const done = await tck.sendMessage({ message: message('done', { taskId: task.id }) });
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(done.contextId, task.contextId, 'contextId inferred from the task');
  });

  await check('errors', async () => {
    await assert.rejects(tck.getTask({ id: 'no-such-task' }), TaskNotFoundError);
    const done = await tck.sendMessage({ message: message('tck-complete-task') });
    await assert.rejects(tck.cancelTask({ id: done.id }), TaskNotCancelableError);
  });
  return checks;
}

const report = {};
for (const transport of ['JSONRPC', 'HTTP+JSON']) {
  report[transport] = await run(transport);
}
console.log(JSON.stringify({ ok: true, checks: report }));
