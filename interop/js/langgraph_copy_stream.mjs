// @langchain/langgraph-sdk against agentd's Agent Protocol face
// (AGENTD_URL + /lg): a copied thread's checkpoint history, hand-offs
// streamed as subgraphs, and token chunks that the SDK's own
// MessageTupleManager (what useStream runs) assembles into the messages the
// thread's state holds. Exits non-zero on the first failed check.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";
import { MessageTupleManager, toMessageDict } from "@langchain/langgraph-sdk/ui";

const base = process.env.AGENTD_URL;
if (!base) throw new Error("AGENTD_URL is not set");
const client = new Client({ apiUrl: base + "/lg", callerOptions: { maxRetries: 0 } });
const human = (content) => ({ messages: [{ role: "user", content }] });
const contents = (state) => state.values.messages.map((m) => m.content);

async function collect(iter) {
  const parts = [];
  for await (const part of iter) parts.push(part);
  return parts;
}

// copyHistory: a copy shows the source's checkpoints, re-rooted on the
// copy; its own runs descend from the source's newest, a run on the copy
// may fork from a copied checkpoint, and the source's later runs stay its
// own.
async function copyHistory() {
  const src = await client.threads.create({ metadata: { kind: "source" } });
  for (const text of ["one", "two"]) await client.runs.wait(src.thread_id, "echo", { input: human(text) });
  const srcHistory = await client.threads.getHistory(src.thread_id, { limit: 10 });
  assert.equal(srcHistory.length, 2);

  const copy = await client.threads.copy(src.thread_id);
  assert.deepEqual(copy.metadata, { kind: "source" }, "the copy's metadata is the source's, and only that");
  const copied = await client.threads.getHistory(copy.thread_id, { limit: 10 });
  assert.deepEqual(copied.map((s) => s.checkpoint.checkpoint_id), srcHistory.map((s) => s.checkpoint.checkpoint_id),
    "the copy's history is the source's checkpoints");
  assert.ok(copied.every((s) => s.checkpoint.thread_id === copy.thread_id && s.metadata.thread_id === copy.thread_id),
    "re-rooted on the copy");
  assert.deepEqual(copied.map(contents), srcHistory.map(contents));
  const state = await client.threads.getState(copy.thread_id);
  assert.equal(state.checkpoint.checkpoint_id, srcHistory[0].checkpoint.checkpoint_id);

  await client.runs.wait(src.thread_id, "echo", { input: human("source only") });
  await client.runs.wait(copy.thread_id, "echo", { input: human("copy only") });
  const after = await client.threads.getHistory(copy.thread_id, { limit: 10 });
  assert.equal(after.length, 3, "the copy: two copied checkpoints and its own run's");
  assert.equal(after[0].parent_checkpoint.checkpoint_id, srcHistory[0].checkpoint.checkpoint_id,
    "the copy's first run descends from the source's newest checkpoint");
  assert.deepEqual(contents(after[0]), ["one", "one", "two", "two", "copy only", "copy only"]);
  assert.ok(after.every((s) => !contents(s).includes("source only")), "the source's later run is not the copy's");
  assert.equal((await client.threads.getHistory(src.thread_id, { limit: 10 })).length, 3);

  const first = srcHistory[1].checkpoint.checkpoint_id;
  const forked = await client.runs.wait(copy.thread_id, "echo", { input: human("again"), checkpointId: first });
  assert.deepEqual(forked.messages.map((m) => m.content), ["one", "one", "again", "again"], "a fork on the copy from a copied checkpoint");
  const branches = await client.threads.getHistory(copy.thread_id, { limit: 10 });
  assert.equal(branches[0].parent_checkpoint.checkpoint_id, first);
  assert.equal(branches.length, 4);

  for (const bad of [() => client.threads.create({ metadata: { "agentd.copied_from": { thread: src.thread_id } } }),
    () => client.threads.update(copy.thread_id, { metadata: { "agentd.copied_from": null } })]) {
    try {
      await bad();
      assert.fail("a client wrote a server's metadata key");
    } catch (err) {
      assert.equal(err.status, 422, `the server's metadata keys are reserved: ${err.message}`);
    }
  }
  const copyOfCopy = await client.threads.copy(copy.thread_id);
  assert.equal((await client.threads.getHistory(copyOfCopy.thread_id, { limit: 10 })).length, 4, "a copy of a copy has it all");
}

// handoffSubgraphs: the desk hands off to the local assistant and to the
// echo peer; with streamSubgraphs the target's events are namespaced
// "mode|<target>:<child run id>", without they are not, and its answer is
// the run's either way.
async function handoffSubgraphs() {
  const cases = [
    { text: "what time is it?", node: "assistant", answer: /^It is / },
    { text: "echo hello", node: "echo", answer: /^echo hello$/ },
  ];
  for (const c of cases) {
    const modes = ["updates", "messages-tuple", "values"];
    const parts = await collect(client.runs.stream(null, "desk", { input: human(c.text), streamMode: modes, streamSubgraphs: true }));
    const names = parts.map((p) => p.event);
    assert.ok(!names.includes("error"), `${c.text}: no error in ${names}`);
    const ns = names.filter((n) => n.includes("|")).map((n) => n.split("|")[1]);
    assert.ok(ns.length > 0 && ns.every((n) => n.startsWith(c.node + ":")), `${c.text}: subgraph events of ${c.node}: ${names}`);
    const child = ns[0].slice(c.node.length + 1);
    assert.match(child, /^[0-9a-f-]{36}$/, "the namespace names the hand-off's child run");
    assert.ok(names.includes(`updates|${c.node}:${child}`), `${c.text}: the target's updates are namespaced`);
    assert.ok(names.includes(`messages|${c.node}:${child}`), `${c.text}: the target's tokens are namespaced`);
    const tokens = parts.filter((p) => p.event === `messages|${c.node}:${child}`);
    assert.ok(tokens.every((p) => p.data[1].langgraph_checkpoint_ns === `${c.node}:${child}`));
    assert.ok(parts.some((p) => p.event === "updates" && p.data[c.node]), `${c.text}: the root's update of node ${c.node}`);
    const final = parts.filter((p) => p.event === "values").pop().data;
    assert.match(final.messages[final.messages.length - 1].content, c.answer, `${c.text}: the target's answer is the run's`);

    const flat = await collect(client.runs.stream(null, "desk", { input: human(c.text), streamMode: modes }));
    assert.ok(flat.every((p) => !p.event.includes("|")), `${c.text}: without streamSubgraphs nothing is namespaced`);
    const flatTokens = flat.filter((p) => p.event === "messages" && p.data[1].langgraph_checkpoint_ns.startsWith(c.node + ":"));
    assert.ok(flatTokens.length > 0, `${c.text}: the target's tokens stream anyway, their namespace in the metadata`);
  }
}

// tupleAssembly: the messages-tuple chunks of echo (text) and of the
// assistant (a tool call, then text), fed to the SDK's MessageTupleManager
// as useStream feeds them, make the AI messages of the run's final state,
// in order: same contents and tool calls. (Their ids differ: a chunk's id
// names the run and the event that opened the message, the state's the
// stored message.)
async function tupleAssembly() {
  for (const [agent, text] of [["echo", "stream 40"], ["assistant", "what time is it?"]]) {
    const th = await client.threads.create();
    const mgr = new MessageTupleManager();
    const ids = [];
    for await (const p of client.runs.stream(th.thread_id, agent, { input: human(text), streamMode: "messages-tuple" })) {
      if (p.event !== "messages" || !p.data[0].type.startsWith("AIMessage")) continue;
      assert.deepEqual(Object.keys(p.data[1]).sort(), ["assistant_id", "graph_id", "langgraph_checkpoint_ns", "langgraph_node", "langgraph_step", "run_id", "tags", "thread_id"],
        "every chunk keeps its metadata");
      const id = mgr.add(p.data[0], p.data[1]);
      if (!ids.includes(id)) ids.push(id);
    }
    const state = await client.threads.getState(th.thread_id);
    const ais = state.values.messages.filter((m) => m.type === "ai");
    assert.equal(ids.length, ais.length, `${agent}: one assembled message per AI message`);
    for (const [i, m] of ais.entries()) {
      const got = toMessageDict(mgr.get(ids[i]).chunk);
      assert.equal(got.content, m.content, `${agent}: message ${m.id}'s content`);
      assert.deepEqual((got.tool_calls ?? []).map((c) => [c.id, c.name, c.args]), (m.tool_calls ?? []).map((c) => [c.id, c.name, c.args]), `${agent}: its tool calls`);
    }
  }
}

const checks = { copyHistory, handoffSubgraphs, tupleAssembly };
const only = process.argv.slice(2);
for (const [name, check] of Object.entries(checks)) {
  if (only.length && !only.includes(name)) continue;
  const t0 = Date.now();
  await check();
  console.log(`ok ${name} (${Date.now() - t0} ms)`);
}
