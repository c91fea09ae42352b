// @langchain/langgraph-sdk, the LangGraph API's own client, against agentd's
// Agent Protocol face (AGENTD_URL + /lg): assistants, threads, runs in every
// stream mode, interrupts answered with command.resume, joinStream after a
// cut, time travel (a fork from an earlier checkpoint), multitask strategies
// and history paging. Exits non-zero on the first failed check.
import assert from "node:assert/strict";
import http from "node:http";
import { Client } from "@langchain/langgraph-sdk";

const base = process.env.AGENTD_URL;
if (!base) throw new Error("AGENTD_URL is not set");
const client = new Client({ apiUrl: base + "/lg", callerOptions: { maxRetries: 0 } });
const human = (content) => ({ messages: [{ role: "user", content }] });
const last = (values) => values.messages[values.messages.length - 1];

async function collect(iter) {
  const parts = [];
  for await (const part of iter) parts.push(part);
  return parts;
}

async function rejects(promise, status, what) {
  try {
    await promise;
  } catch (err) {
    assert.equal(err.status, status, `${what}: status ${err.status}, want ${status}: ${err.message}`);
    return err;
  }
  assert.fail(`${what}: did not fail`);
}

async function assistants() {
  const all = await client.assistants.search({ limit: 100 });
  const ids = all.map((a) => a.graph_id);
  for (const id of ["echo", "assistant", "research", "refund"]) assert.ok(ids.includes(id), `assistant ${id} listed`);
  const echo = all.find((a) => a.graph_id === "echo");
  assert.equal((await client.assistants.get(echo.assistant_id)).graph_id, "echo");
  assert.equal((await client.assistants.get("echo")).assistant_id, echo.assistant_id);
  const schemas = await client.assistants.getSchemas("assistant");
  assert.equal(schemas.graph_id, "assistant");
  assert.ok(schemas.input_schema.properties.messages, "input schema has messages");
  const graph = await client.assistants.getGraph("assistant");
  assert.ok(graph.nodes.some((n) => n.id === "tools"), "the tool loop's graph has a tools node");
  const dag = await client.assistants.getGraph("research");
  assert.ok(dag.edges.some((e) => e.source === "plan" && e.target === "history"), "the workflow's DAG: plan → history");
  const flow = await client.assistants.getGraph("refund");
  assert.ok(flow.edges.some((e) => e.source === "__start__" && e.target === "start"), "the flow's entry node");
  assert.equal(await client.assistants.count({ graphId: "research" }), 1);
  await rejects(client.assistants.create({ graphId: "echo", context: { modle: "x" } }), 422, "an assistant overriding an unknown field");
  await rejects(client.assistants.get("no-such-agent"), 404, "an unknown assistant");
}

async function threads() {
  const tag = "t-" + Date.now();
  const th = await client.threads.create({ metadata: { tag, user: "ann" } });
  assert.equal(th.status, "idle");
  assert.equal(th.metadata.user, "ann");
  const same = await client.threads.create({ threadId: th.thread_id, ifExists: "do_nothing" });
  assert.equal(same.thread_id, th.thread_id);
  await rejects(client.threads.create({ threadId: th.thread_id }), 409, "a second create of one id");
  const found = await client.threads.search({ metadata: { tag } });
  assert.deepEqual(found.map((t) => t.thread_id), [th.thread_id]);
  assert.equal(await client.threads.count({ metadata: { tag } }), 1);
  const patched = await client.threads.update(th.thread_id, { metadata: { user: "bob" } });
  assert.equal(patched.metadata.user, "bob");
  assert.equal(patched.metadata.tag, tag);
  const out = await client.runs.wait(th.thread_id, "echo", { input: human("hello there") });
  assert.equal(last(out).content, "hello there");
  const copy = await client.threads.copy(th.thread_id);
  assert.notEqual(copy.thread_id, th.thread_id);
  const copied = await client.threads.getState(copy.thread_id);
  assert.deepEqual(copied.values.messages.map((m) => m.content), ["hello there", "hello there"]);
  assert.equal((await client.threads.search({ metadata: { tag }, status: "idle" })).length, 2);
  await client.threads.delete(copy.thread_id);
  await rejects(client.threads.get(copy.thread_id), 404, "a deleted thread");
}

// modes streams one run per stream mode and agent — echo, the assistant
// (a tool call), the research workflow, the refund flow (which stops at its
// first question) — and checks each mode's events.
async function modes() {
  const want = {
    values: "values", updates: "updates", "messages-tuple": "messages", messages: "messages/",
    events: "events", debug: "debug", tasks: "tasks", checkpoints: "checkpoints", custom: "custom",
  };
  const inputs = { echo: "one two three", assistant: "what time is it?", research: "go", refund: "I want a refund" };
  for (const [agent, text] of Object.entries(inputs)) {
    for (const [mode, event] of Object.entries(want)) {
      if (mode === "custom" && agent !== "research") continue; // only the workflow has a plan to stream
      const th = await client.threads.create();
      const parts = await collect(client.runs.stream(th.thread_id, agent, { input: human(text), streamMode: mode }));
      const names = parts.map((p) => p.event);
      assert.equal(names[0], "metadata", `${agent} ${mode}: metadata first`);
      assert.ok(names.some((n) => n.startsWith(event)), `${agent} ${mode}: a ${event} event in ${names}`);
      assert.ok(!names.includes("error"), `${agent} ${mode}: no error`);
      const ids = parts.filter((p) => p.id !== undefined).map((p) => p.id);
      assert.equal(new Set(ids).size, ids.length, `${agent} ${mode}: event ids are unique`);
    }
  }
  const th = await client.threads.create();
  const parts = await collect(client.runs.stream(th.thread_id, "echo", { input: human("a b c d"), streamMode: "messages-tuple" }));
  const text = parts.filter((p) => p.event === "messages").map((p) => p.data[0].content).join("");
  assert.equal(text, "a b c d");
  const custom = await collect(client.runs.stream(null, "research", { input: human("go"), streamMode: "custom" }));
  assert.ok(custom.some((p) => p.event === "custom" && p.data.type === "plan"), "the workflow's plan streams as custom");
  // A tool call with effects (the scout's peer tool) streams its ledger as custom.
  const fx = await collect(client.runs.stream(null, "scout", { input: human("ask the peer hello"), streamMode: "custom" }));
  const kinds = fx.filter((p) => p.event === "custom" && String(p.data.type).startsWith("effect.")).map((p) => p.data.type);
  assert.deepEqual(kinds, ["effect.intent", "effect.result"], "the peer call's effect intent and result stream as custom");
}

async function toolCall() {
  const th = await client.threads.create();
  const parts = await collect(client.runs.stream(th.thread_id, "assistant", {
    input: human("what time is it?"), streamMode: ["messages-tuple", "updates", "values"],
  }));
  const chunks = parts.filter((p) => p.event === "messages").map((p) => p.data[0]);
  assert.ok(chunks.some((c) => c.tool_call_chunks?.some((t) => t.name === "clock")), "a clock tool call chunk");
  assert.ok(chunks.some((c) => c.type === "tool" && c.name === "clock"), "the clock's tool message");
  assert.ok(parts.some((p) => p.event === "updates" && p.data.tools), "an update of the tools node");
  const final = parts.filter((p) => p.event === "values").pop().data;
  assert.deepEqual(final.messages.map((m) => m.type), ["human", "ai", "tool", "ai"]);
  const state = await client.threads.getState(th.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.type), ["human", "ai", "tool", "ai"]);
  assert.deepEqual(state.next, []);
}

async function workflow() {
  const parts = await collect(client.runs.stream(null, "research", {
    input: human("quantum computing"), streamMode: ["updates", "messages-tuple"], streamSubgraphs: true,
  }));
  const steps = parts.filter((p) => p.event.startsWith("updates")).flatMap((p) => Object.keys(p.data));
  for (const step of ["research_node_plan", "research_node_write", "research_node_publish"]) {
    assert.ok(steps.includes(step), `an update of step ${step} in ${steps}`);
  }
  assert.ok(parts.some((p) => p.event.startsWith("updates|research_node_plan:")), "subgraph updates carry their namespace");
  const nested = parts.filter((p) => p.event.startsWith("messages")).map((p) => p.data[1].langgraph_checkpoint_ns);
  assert.ok(nested.some((ns) => ns.startsWith("research_node_")), "tokens of the steps' agents name their step");
}

async function interrupts() {
  const th = await client.threads.create();
  let out = await client.runs.wait(th.thread_id, "refund", { input: human("I want a refund") });
  assert.match(out.__interrupt__[0].value.question, /Which order/);
  assert.equal((await client.threads.get(th.thread_id)).status, "interrupted");
  for (const answer of ["A-1001", "damaged"]) {
    out = await client.runs.wait(th.thread_id, "refund", { command: { resume: answer } });
    assert.ok(out.__interrupt__, `still asking after ${answer}`);
  }
  const parts = await collect(client.runs.stream(th.thread_id, "refund", { command: { resume: "yes" }, streamMode: "values" }));
  const final = parts.filter((p) => p.event === "values").pop().data;
  assert.match(last(final).content, /refund R-\d+ of 42.5 EUR/);
  assert.equal((await client.threads.get(th.thread_id)).status, "idle");
  await rejects(client.runs.wait(th.thread_id, "refund", { command: { resume: "again" } }), 422, "a resume with nothing to resume");

  const guarded = await client.threads.create();
  out = await client.runs.wait(guarded.thread_id, "guarded", { input: human("delete notes.txt") });
  assert.equal(out.__interrupt__[0].value.action_request.action, "delete_file");
  out = await client.runs.wait(guarded.thread_id, "guarded", { command: { resume: [{ type: "accept" }] } });
  assert.equal(out.__interrupt__, undefined);
  assert.ok(out.messages.some((m) => m.type === "tool" && m.name === "delete_file"), "the approved call ran");
}

// joinStream resumes a cut stream after its last event id: every token once.
async function joinAfterCut() {
  const th = await client.threads.create();
  const abort = new AbortController();
  let runId, lastId;
  const seen = [];
  try {
    for await (const p of client.runs.stream(th.thread_id, "echo", {
      input: human("stream 30 every 20ms"), streamMode: "messages-tuple", signal: abort.signal,
      onRunCreated: (m) => { runId = m.run_id; },
    })) {
      if (p.event === "messages") {
        seen.push(p.data[0].content);
        lastId = p.id;
        if (seen.length === 10) abort.abort();
      }
    }
  } catch (err) {
    if (err.name !== "AbortError") throw err;
  }
  assert.ok(runId && lastId, "the run and the last event id are known");
  for await (const p of client.runs.joinStream(th.thread_id, runId, { lastEventId: lastId })) {
    if (p.event === "messages") seen.push(p.data[0].content);
  }
  const want = Array.from({ length: 30 }, (_, i) => (i ? " " : "") + "tok" + (i + 1)).join("");
  assert.equal(seen.join(""), want);
  const joined = await client.runs.join(th.thread_id, runId);
  assert.equal(last(joined).content, want);
}

// fork continues a thread from the second of its three checkpoints.
async function fork() {
  const th = await client.threads.create();
  for (const text of ["one", "two", "three"]) await client.runs.wait(th.thread_id, "echo", { input: human(text) });
  const history = await client.threads.getHistory(th.thread_id, { limit: 10 });
  assert.equal(history.length, 3);
  const second = history[1];
  assert.deepEqual(second.values.messages.map((m) => m.content), ["one", "one", "two", "two"]);
  const out = await client.runs.wait(th.thread_id, "echo", {
    input: human("two again"), checkpointId: second.checkpoint.checkpoint_id,
  });
  assert.deepEqual(out.messages.map((m) => m.content), ["one", "one", "two", "two", "two again", "two again"]);
  const after = await client.threads.getHistory(th.thread_id, { limit: 10 });
  assert.equal(after.length, 4, "both branches stay in the history");
  assert.equal(after[0].parent_checkpoint.checkpoint_id, second.checkpoint.checkpoint_id);
  assert.ok(after.some((s) => s.values.messages.some((m) => m.content === "three")), "the first branch is still readable");
  const next = await client.runs.wait(th.thread_id, "echo", { input: human("four") });
  assert.deepEqual(next.messages.map((m) => m.content).slice(-4), ["two again", "two again", "four", "four"]);
  const other = await client.threads.create();
  await rejects(client.runs.wait(other.thread_id, "echo", { input: human("x"), checkpointId: second.checkpoint.checkpoint_id }),
    404, "a checkpoint of another thread");

  // A workflow forked from the checkpoint after its write step re-runs the
  // steps after it only.
  const wf = await client.threads.create();
  await client.runs.wait(wf.thread_id, "research", { input: human("go") });
  const steps = await client.threads.getHistory(wf.thread_id, { limit: 20 });
  const write = steps.find((s) => s.metadata.agentd_step === "step:write");
  assert.ok(write, "a checkpoint after the write step");
  const parts = await collect(client.runs.stream(wf.thread_id, "research", {
    input: human("again"), checkpointId: write.checkpoint.checkpoint_id, streamMode: "updates",
  }));
  const ran = parts.filter((p) => p.event === "updates").flatMap((p) => Object.keys(p.data));
  assert.ok(ran.includes("research_node_publish"), `the fork publishes: ${ran}`);
  assert.ok(!ran.some((s) => s.startsWith("research_node_plan") || s.startsWith("research_node_write")), `the fork re-runs no step before the checkpoint: ${ran}`);
  // The next run on the thread follows the branch and runs the workflow anew.
  const after2 = await collect(client.runs.stream(wf.thread_id, "research", { input: human("once more"), streamMode: "updates" }));
  const all = after2.filter((p) => p.event === "updates").flatMap((p) => Object.keys(p.data));
  assert.ok(all.includes("research_node_plan") && all.includes("research_node_publish"), `a run after the fork runs every step: ${all}`);
}

async function paging() {
  const th = await client.threads.create();
  for (const text of ["a", "b", "c", "d", "e"]) await client.runs.wait(th.thread_id, "echo", { input: human(text) });
  const seen = [];
  let before;
  for (;;) {
    const page = await client.threads.getHistory(th.thread_id, { limit: 2, before });
    if (page.length === 0) break;
    seen.push(...page.map((s) => s.checkpoint.checkpoint_id));
    before = { configurable: { checkpoint_id: page[page.length - 1].checkpoint.checkpoint_id } };
  }
  assert.equal(seen.length, 5);
  assert.equal(new Set(seen).size, 5);
}

async function multitask() {
  const th = await client.threads.create();
  const busy = await client.runs.create(th.thread_id, "echo", { input: human("stream 50 every 40ms") });
  await rejects(client.runs.create(th.thread_id, "echo", { input: human("no") }), 409, "a run on a busy thread under reject");
  const queued = await client.runs.create(th.thread_id, "echo", { input: human("queued"), multitaskStrategy: "enqueue" });
  assert.equal(queued.status, "pending");
  const followed = await collect(client.threads.joinStream(th.thread_id, { streamMode: "messages-tuple" }));
  assert.equal(followed[0].data.run_id, queued.run_id, "the thread stream follows its newest run");
  assert.equal(followed.filter((p) => p.event === "messages").map((p) => p.data[0].content).join(""), "queued");
  await client.runs.join(th.thread_id, queued.run_id);
  assert.equal((await client.runs.get(th.thread_id, busy.run_id)).status, "success");
  assert.equal((await client.runs.get(th.thread_id, queued.run_id)).status, "success");
  const long = await client.runs.create(th.thread_id, "echo", { input: human("stream 50 every 40ms") });
  const interrupting = await client.runs.wait(th.thread_id, "echo", { input: human("now"), multitaskStrategy: "interrupt" });
  assert.equal(last(interrupting).content, "now");
  assert.notEqual((await client.runs.get(th.thread_id, long.run_id)).status, "success");
  const runs = await client.runs.list(th.thread_id);
  assert.equal(runs.length, 4);
  assert.ok(runs.every((r) => r.thread_id === th.thread_id));

  const batch = await client.runs.createBatch([
    { assistantId: "echo", input: human("stream 50 every 40ms") },
    { assistantId: "echo", input: human("stream 50 every 40ms") },
  ]);
  assert.equal(batch.length, 2);
  await client.runs.cancelMany({ runIds: batch.map((r) => r.run_id) });
  for (const r of batch) {
    const done = await client.runs.join(r.thread_id, r.run_id).catch(() => null);
    assert.notEqual((await client.runs.get(r.thread_id, r.run_id)).status, "success", `batch run ${r.run_id} was canceled`);
    void done;
  }
  const busy2 = await client.runs.create(th.thread_id, "echo", { input: human("stream 50 every 40ms") });
  await client.runs.cancelMany({ threadId: th.thread_id, status: "running" });
  await client.runs.join(th.thread_id, busy2.run_id).catch(() => null);
  assert.equal((await client.runs.get(th.thread_id, busy2.run_id)).status, "interrupted");
  const pruned = await client.threads.prune([th.thread_id]);
  assert.equal(pruned.pruned_count, 1);
  await rejects(client.threads.get(th.thread_id), 404, "a pruned thread");
}

// rollback deletes the thread's running run (its checkpoints and messages
// with it) before the new run starts; a finished run is deleted, a running
// one refused (409), and cancel with action rollback deletes it too.
async function rollbackAndDelete() {
  const th = await client.threads.create();
  await client.runs.wait(th.thread_id, "echo", { input: human("kept") });
  const doomed = await client.runs.create(th.thread_id, "echo", { input: human("stream 50 every 40ms") });
  const after = await client.runs.wait(th.thread_id, "echo", { input: human("instead"), multitaskStrategy: "rollback" });
  assert.equal(last(after).content, "instead");
  await rejects(client.runs.get(th.thread_id, doomed.run_id), 404, "a rolled-back run");
  const runs = await client.runs.list(th.thread_id);
  assert.equal(runs.length, 2, "the rolled-back run is not listed");
  let state = await client.threads.getState(th.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.content), ["kept", "kept", "instead", "instead"]);
  const history = await client.threads.getHistory(th.thread_id, { limit: 100 });
  assert.ok(history.length > 0 && history.every((s) => s.metadata.run_id !== doomed.run_id), "no checkpoint of the rolled-back run");

  const busy = await client.runs.create(th.thread_id, "echo", { input: human("stream 50 every 40ms") });
  await rejects(client.runs.delete(th.thread_id, busy.run_id), 409, "deleting a running run");
  await client.runs.cancel(th.thread_id, busy.run_id, true, "rollback");
  await rejects(client.runs.get(th.thread_id, busy.run_id), 404, "a run canceled with action rollback");
  await client.runs.delete(th.thread_id, runs[0].run_id);
  await rejects(client.runs.get(th.thread_id, runs[0].run_id), 404, "a deleted run");
  await rejects(client.runs.delete(th.thread_id, runs[0].run_id), 404, "a second delete");
  state = await client.threads.getState(th.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.content), ["kept", "kept"]);
  assert.equal((await client.threads.get(th.thread_id)).status, "idle");
}

// afterSeconds creates a pending run that starts after its delay.
async function delayed() {
  const th = await client.threads.create();
  const t0 = Date.now();
  const run = await client.runs.create(th.thread_id, "echo", { input: human("later"), afterSeconds: 1.5 });
  assert.equal(run.status, "pending");
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await client.runs.get(th.thread_id, run.run_id)).status, "pending", "still pending before its delay");
  const out = await client.runs.join(th.thread_id, run.run_id);
  assert.equal(last(out).content, "later");
  assert.ok(Date.now() - t0 >= 1500, `the delayed run ended ${Date.now() - t0} ms after its creation`);
  await rejects(client.runs.wait(th.thread_id, "echo", { input: human("x"), afterSeconds: 1 }), 422, "a delayed run awaited");
  await rejects(client.runs.create(th.thread_id, "echo", { input: human("x"), afterSeconds: -1 }), 422, "a negative delay");
}

// config.configurable and context are accepted and recorded (the run's
// kwargs); a tool_choice that is not a string is refused (422).
async function configAndContext() {
  const th = await client.threads.create();
  const run = await client.runs.create(th.thread_id, "echo", {
    input: human("configured"), config: { configurable: { tool_choice: "auto", user_id: "u1" }, tags: ["t"] }, context: { user_id: "u1" },
  });
  await client.runs.join(th.thread_id, run.run_id);
  const got = await client.runs.get(th.thread_id, run.run_id);
  assert.deepEqual(got.kwargs.context, { user_id: "u1" });
  assert.equal(got.kwargs.config.configurable.user_id, "u1");
  await rejects(client.runs.create(th.thread_id, "echo", { input: human("x"), config: { configurable: { tool_choice: 3 } } }), 422, "a numeric tool_choice");
  await rejects(client.runs.create(th.thread_id, "echo", { input: human("x"), context: "not an object" }), 422, "a context that is not an object");
}

// webhooks: a run's webhook gets one POST with the run and its final
// values once it stopped — also a delayed run's, and an interrupted run's
// (then its resume's, with its own webhook). The test server allows
// loopback webhooks (push.allow_private).
async function webhooks() {
  const bodies = [];
  let wake = () => {};
  const server = http.createServer((req, res) => {
    let b = "";
    req.on("data", (c) => { b += c; });
    req.on("end", () => { bodies.push(JSON.parse(b)); res.writeHead(204).end(); wake(); });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}/hook`;
  const until = (cond) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`webhook: condition not met after ${bodies.length} requests`)), 15000);
    wake = () => { if (cond()) { clearTimeout(timer); resolve(); } };
    wake();
  });
  try {
    const th = await client.threads.create();
    const run = await client.runs.create(th.thread_id, "echo", { input: human("hooked"), webhook: url });
    const later = await client.runs.create(th.thread_id, "echo", { input: human("hooked later"), webhook: url, afterSeconds: 1, multitaskStrategy: "enqueue" });
    const asked = await client.threads.create();
    const refund = await client.runs.create(asked.thread_id, "refund", { input: human("I want a refund"), webhook: url });
    await until(() => bodies.length >= 3);
    const byRun = (id) => bodies.filter((b) => b.run_id === id);
    assert.equal(byRun(run.run_id).length, 1);
    assert.equal(byRun(run.run_id)[0].status, "success");
    assert.equal(last(byRun(run.run_id)[0].values).content, "hooked");
    assert.equal(last(byRun(later.run_id)[0].values).content, "hooked later");
    assert.equal(byRun(refund.run_id)[0].status, "interrupted");
    await client.runs.create(asked.thread_id, "refund", { command: { resume: "A-1001" }, webhook: url });
    await until(() => byRun(refund.run_id).length >= 2);
    assert.equal(byRun(refund.run_id).length, 2, "the resume's webhook, once; the first run's is not called again");
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(bodies.length, 4, "one POST per webhook");
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

const checks = {
  assistants, threads, modes, toolCall, workflow, interrupts, joinAfterCut, fork, paging, multitask,
  rollbackAndDelete, delayed, configAndContext, webhooks,
};
const only = process.argv.slice(2);
for (const [name, check] of Object.entries(checks)) {
  if (only.length && !only.includes(name)) continue;
  const t0 = Date.now();
  await check();
  console.log(`ok ${name} (${Date.now() - t0} ms)`);
}
