// @langchain/langgraph-sdk's crons client against agentd's Agent Protocol
// face (AGENTD_URL + /lg): crons.create (a new conversation per tick, with
// an end date), crons.createForThread (runs into an existing thread),
// crons.search and count, crons.delete, and a bad schedule refused with
// a 422 naming the field and nothing stored. Each fired run is an ordinary
// run whose metadata carries schedule_id. Exits non-zero on the first
// failed check.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const base = process.env.AGENTD_URL;
if (!base) throw new Error("AGENTD_URL is not set");
const client = new Client({ apiUrl: base + "/lg", callerOptions: { maxRetries: 0 } });
const human = (content) => ({ messages: [{ role: "user", content }] });
const tag = "cron-" + Date.now();

async function rejects(promise, status, what) {
  try {
    await promise;
  } catch (err) {
    assert.equal(err.status, status, `${what}: status ${err.status}, want ${status}: ${err.message}`);
    return err;
  }
  assert.fail(`${what}: did not fail`);
}

// until polls check (a promise of a value or undefined) until it answers,
// for at most ms.
async function until(check, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

// scheduledRuns lists the runs (through the REST API) a cron started.
async function scheduledRuns(cronId) {
  const res = await fetch(base + "/v1/runs?limit=100");
  assert.equal(res.status, 200);
  const { runs } = await res.json();
  return runs.filter((r) => r.metadata?.schedule_id === cronId);
}

async function main() {
  const echo = (await client.assistants.search({ graphId: "echo" }))[0];

  // A bad expression: a 422 naming the field, and no cron stored.
  const bad = await rejects(client.crons.create("echo", { schedule: "61 * * * *", input: human("x"), metadata: { tag } }), 422, "a bad schedule");
  assert.match(bad.message, /schedule/, "the error names the schedule field");
  await rejects(client.crons.create("echo", { schedule: "* * * * *", timezone: "Mars/Olympus", input: human("x"), metadata: { tag } }), 422, "a bad timezone");
  await rejects(client.crons.create("no-such-agent", { schedule: "* * * * *", input: human("x") }), 404, "an unknown assistant");
  assert.equal(await client.crons.count({ metadata: { tag } }), 0, "nothing stored after the refusals");

  // A cron of the assistant: a new conversation per tick, until its end.
  const end = new Date(Date.now() + 2500);
  const cron = await client.crons.create(echo.assistant_id, {
    schedule: "* * * * * *", input: human("tick"), metadata: { tag, kind: "stateless" }, endTime: end.toISOString(),
  });
  assert.ok(cron.cron_id, "a cron id");
  assert.equal(cron.assistant_id, echo.assistant_id);
  assert.equal(cron.schedule, "* * * * * *");
  assert.equal(cron.thread_id, null);
  assert.ok(Date.parse(cron.next_run_date) > Date.now() - 1000, "its next run date");
  assert.equal(Date.parse(cron.end_time), end.getTime(), "its end time");

  // A cron for a thread: runs into that conversation.
  const th = await client.threads.create({ metadata: { tag } });
  const tcron = await client.crons.createForThread(th.thread_id, "echo", {
    schedule: "* * * * * *", timezone: "Europe/Paris", input: human("thread tick"), metadata: { tag, kind: "thread" },
  });
  assert.equal(tcron.thread_id, th.thread_id);
  assert.equal(tcron.timezone, "Europe/Paris");
  await rejects(client.crons.createForThread("no-such-thread", "echo", { schedule: "* * * * *", input: human("x") }), 404, "a cron for an unknown thread");

  // Search and count.
  const mine = await client.crons.search({ metadata: { tag } });
  assert.deepEqual(mine.map((c) => c.cron_id).sort(), [cron.cron_id, tcron.cron_id].sort());
  const onThread = await client.crons.search({ threadId: th.thread_id });
  assert.deepEqual(onThread.map((c) => c.cron_id), [tcron.cron_id]);
  assert.equal(await client.crons.count({ assistantId: "echo", metadata: { tag } }), 2);
  assert.equal((await client.crons.search({ metadata: { tag }, limit: 1, offset: 1 })).length, 1, "paged");

  // The thread's cron runs on the thread: an ordinary run with schedule_id.
  const run = await until(async () => {
    const runs = await client.runs.list(th.thread_id);
    return runs.find((r) => r.metadata.schedule_id === tcron.cron_id && r.status === "success");
  }, 15000, "a scheduled run on the thread");
  assert.ok(run.metadata.schedule_tick, "the run names its tick");
  const state = await client.threads.getState(th.thread_id);
  assert.ok(state.values.messages.some((m) => m.content === "thread tick"), "the tick's message is in the thread");

  // The stateless cron ends: no next run, one run per tick before its end.
  const ended = await until(async () => {
    const [c] = (await client.crons.search({ metadata: { tag, kind: "stateless" } }));
    return c.next_run_date === null ? c : undefined;
  }, 15000, "the cron's end");
  assert.equal(ended.enabled, false);
  const fired = await scheduledRuns(cron.cron_id);
  const ticks = new Set(fired.map((r) => r.metadata.schedule_tick));
  assert.equal(ticks.size, fired.length, "each tick fired once");
  for (const r of fired) assert.ok(Date.parse(r.metadata.schedule_tick) < end.getTime(), `tick ${r.metadata.schedule_tick} before the end`);
  assert.ok(fired.length >= 2 && fired.length <= 3, `${fired.length} runs in 2.5 s of a cron every second`);
  assert.equal(new Set(fired.map((r) => r.context_id)).size, fired.length, "a new conversation per tick");

  // Delete: gone from search, a second delete is a 404, no run after.
  await client.crons.delete(tcron.cron_id);
  await client.crons.delete(cron.cron_id);
  assert.equal(await client.crons.count({ metadata: { tag } }), 0);
  await rejects(client.crons.delete(tcron.cron_id), 404, "a second delete");
  await rejects(client.crons.update(cron.cron_id, { schedule: "* * * * *" }), 405, "updating a cron");
  console.log("langgraph crons: ok");
}

await main();
