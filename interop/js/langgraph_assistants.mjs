// @langchain/langgraph-sdk's assistants client against agentd's Agent
// Protocol face (AGENTD_URL + /lg), as two tenants (ACME_KEY, GLOBEX_KEY):
// create, update (a new version), getVersions, setLatest, search, count,
// delete; runs on each version whose answer shows the version's system
// prompt and model (the demo assistant's "who are you?" rule quotes them);
// overrides the agent would refuse, refused with the field named and
// nothing stored; and another tenant that sees none of it. Exits non-zero
// on the first failed check.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const base = process.env.AGENTD_URL;
if (!base) throw new Error("AGENTD_URL is not set");
const client = (key) => new Client({ apiUrl: base + "/lg", apiKey: key, callerOptions: { maxRetries: 0 } });
const acme = client(process.env.ACME_KEY);
const globex = client(process.env.GLOBEX_KEY);
const human = (content) => ({ messages: [{ role: "user", content }] });
const answer = async (c, assistantId) => {
  const out = await c.runs.wait(null, assistantId, { input: human("who are you?") });
  return out.messages[out.messages.length - 1].content;
};

async function rejects(promise, status, field, what) {
  try {
    await promise;
  } catch (err) {
    assert.equal(err.status, status, `${what}: status ${err.status}, want ${status}: ${err.message}`);
    if (field) assert.ok(err.message.includes(field), `${what}: ${err.message} names ${field}`);
    return err;
  }
  assert.fail(`${what}: did not fail`);
}

const tag = "t-" + Date.now();

// versions: create, a run on it, update, a run on version 2, the versions
// listed, setLatest back to 1 and a run on it again.
async function versions() {
  const ada = await acme.assistants.create({
    graphId: "assistant", name: "ada", description: "answers as Ada",
    context: { system_prompt: "You are Ada.", model: "ada-1" }, metadata: { tag, team: "red" },
  });
  assert.equal(ada.version, 1);
  assert.equal(ada.graph_id, "assistant");
  assert.deepEqual(ada.context, { system_prompt: "You are Ada.", model: "ada-1" });
  assert.equal(await answer(acme, ada.assistant_id), "My instructions: You are Ada. (model ada-1)");

  const bob = await acme.assistants.update(ada.assistant_id, { context: { system_prompt: "You are Bob." }, metadata: { team: "blue" } });
  assert.equal(bob.version, 2);
  assert.equal(bob.name, "ada", "the name is kept");
  assert.deepEqual(bob.metadata, { tag, team: "blue" }, "metadata is merged");
  assert.equal((await acme.assistants.get(ada.assistant_id)).version, 2);
  assert.equal(await answer(acme, ada.assistant_id), "My instructions: You are Bob.");

  const vs = await acme.assistants.getVersions(ada.assistant_id);
  assert.deepEqual(vs.map((v) => v.version), [2, 1]);
  assert.equal(vs[1].context.system_prompt, "You are Ada.");
  const red = await acme.assistants.getVersions(ada.assistant_id, { metadata: { team: "red" } });
  assert.deepEqual(red.map((v) => v.version), [1]);

  const back = await acme.assistants.setLatest(ada.assistant_id, 1);
  assert.equal(back.version, 1);
  assert.equal(await answer(acme, ada.assistant_id), "My instructions: You are Ada. (model ada-1)");

  // A streamed run's messages name the assistant, and its checkpoints too.
  let named = false;
  for await (const chunk of acme.runs.stream(null, ada.assistant_id, { input: human("who are you?"), streamMode: "messages-tuple" })) {
    if (chunk.event === "messages" && chunk.data[1].assistant_id === ada.assistant_id) named = true;
  }
  assert.ok(named, "the stream's message metadata names the stored assistant");

  // A run on a thread names its assistant.
  const th = await acme.threads.create();
  const run = await acme.runs.create(th.thread_id, ada.assistant_id, { input: human("who are you?") });
  assert.equal(run.assistant_id, ada.assistant_id);
  await acme.runs.join(th.thread_id, run.run_id);
  const state = await acme.threads.getState(th.thread_id);
  assert.equal(state.metadata.assistant_id, ada.assistant_id, "the checkpoint names the stored assistant");
  return ada.assistant_id;
}

// search: the stored assistant is found by graph, name and metadata, after
// the agents' default assistants.
async function search(id) {
  const found = await acme.assistants.search({ graphId: "assistant", metadata: { tag } });
  assert.deepEqual(found.map((a) => a.assistant_id), [id]);
  const all = await acme.assistants.search({ graphId: "assistant", limit: 100 });
  assert.equal(all[0].metadata.created_by, "system", "the agent's default assistant first");
  assert.ok(all.some((a) => a.assistant_id === id));
  assert.equal(await acme.assistants.count({ graphId: "assistant", name: "ada" }), 1);
  // The schemas of a stored assistant are its agent's; context_schema says what it may override.
  const schemas = await acme.assistants.getSchemas(id);
  assert.equal(schemas.graph_id, "assistant");
  assert.ok(schemas.context_schema.properties.system_prompt, "a loop agent's context schema lists its overrides");
  assert.deepEqual(Object.keys((await acme.assistants.getSchemas("refund")).context_schema.properties), [], "a flow takes none");
}

// badInput: what the configuration file would refuse is refused, naming
// the member, and nothing is stored.
async function badInput(id) {
  const before = await acme.assistants.count({ metadata: { tag } });
  const bad = [
    [{ graphId: "assistant", context: { modle: "x" }, metadata: { tag } }, 422, "context.modle", "a misspelt override"],
    [{ graphId: "assistant", context: { temperature: 5 }, metadata: { tag } }, 422, "context.temperature", "a temperature out of range"],
    [{ graphId: "assistant", context: { tools: ["clock", "shell"] }, metadata: { tag } }, 422, "context.tools[1]", "a tool the agent lacks"],
    [{ graphId: "refund", context: { model: "x" }, metadata: { tag } }, 422, "context", "an override of a flow agent"],
    [{ graphId: "nope", metadata: { tag } }, 422, "agent_id", "an unknown agent"],
    [{ graphId: "assistant", config: { recursion_limit: 3 }, metadata: { tag } }, 422, "config.recursion_limit", "config"],
  ];
  for (const [payload, status, field, what] of bad) await rejects(acme.assistants.create(payload), status, field, what);
  assert.equal(await acme.assistants.count({ metadata: { tag } }), before, "nothing stored");
  await rejects(acme.assistants.update(id, { context: { max_tokens: -1 } }), 422, "context.max_tokens", "a bad update");
  assert.equal((await acme.assistants.getVersions(id)).length, 2, "no version stored");
  await rejects(acme.assistants.setLatest(id, 9), 404, "", "a missing version");
  await rejects(acme.assistants.update("assistant", { name: "x" }), 409, "", "an agent's default assistant");
  const dup = await acme.assistants.create({ graphId: "assistant", assistantId: id, ifExists: "do_nothing" });
  assert.equal(dup.version, 1, "if_exists do_nothing answers the assistant as it is");
  await rejects(acme.assistants.create({ graphId: "assistant", assistantId: id }), 409, "", "an existing id");
}

// tenancy: globex sees none of acme's assistant and cannot run it.
async function tenancy(id) {
  await rejects(globex.assistants.get(id), 404, "", "another tenant's get");
  await rejects(globex.assistants.getVersions(id), 404, "", "another tenant's versions");
  await rejects(globex.assistants.update(id, { name: "x" }), 404, "", "another tenant's update");
  await rejects(globex.assistants.setLatest(id, 2), 404, "", "another tenant's setLatest");
  await rejects(globex.assistants.delete(id), 404, "", "another tenant's delete");
  await rejects(globex.runs.wait(null, id, { input: human("who are you?") }), 404, "", "another tenant's run");
  assert.equal((await globex.assistants.search({ metadata: { tag } })).length, 0);
  assert.equal((await acme.assistants.get(id)).version, 1, "untouched");
}

async function remove(id) {
  await acme.assistants.delete(id);
  await rejects(acme.assistants.get(id), 404, "", "a deleted assistant");
  await rejects(acme.runs.wait(null, id, { input: human("who are you?") }), 404, "", "a run on a deleted assistant");
}

const id = await versions();
await search(id);
await badInput(id);
await tenancy(id);
await remove(id);
console.log("langgraph-sdk assistants: ok");
