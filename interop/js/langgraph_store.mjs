// @langchain/langgraph-sdk's store client against agentd's long-term memory
// (AGENTD_URL + /lg, keys ACME_KEY and GLOBEX_KEY of two tenants):
// putItem, getItem (with refreshTtl), searchItems (prefix, filter, query,
// paging), listNamespaces, deleteItem; a namespace with an empty label is
// refused naming it and stores nothing; the other tenant sees nothing.
// Exits non-zero on the first failed check.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const base = process.env.AGENTD_URL;
if (!base) throw new Error("AGENTD_URL is not set");
const client = (key) => new Client({ apiUrl: base + "/lg", apiKey: key, callerOptions: { maxRetries: 0 } });
const acme = client(process.env.ACME_KEY).store;
const globex = client(process.env.GLOBEX_KEY).store;

async function rejects(promise, status, what) {
  try {
    await promise;
  } catch (err) {
    assert.equal(err.status, status, `${what}: status ${err.status}, want ${status}: ${err.message}`);
    return err;
  }
  assert.fail(`${what}: did not fail`);
}

const ns = ["memories", "ann"];

async function putAndGet() {
  assert.equal(await acme.putItem(ns, "colour", { fact: "Ann's favourite colour is blue", kind: "preference" }), undefined);
  await acme.putItem(ns, "city", { fact: "Ann lives in Lisbon", kind: "place" }, { ttl: 60 });
  await acme.putItem(["memories", "ann", "notes"], "n1", { fact: "Ann paints", kind: "hobby" }, { index: false });
  await acme.putItem(["memories", "bob"], "colour", { fact: "Bob likes red", kind: "preference" });
  const item = await acme.getItem(ns, "colour");
  assert.deepEqual(item.namespace, ns);
  assert.equal(item.key, "colour");
  assert.equal(item.value.fact, "Ann's favourite colour is blue");
  assert.ok(!Number.isNaN(Date.parse(item.createdAt)) && item.createdAt === item.created_at, "createdAt");
  assert.ok(!Number.isNaN(Date.parse(item.updatedAt)), "updatedAt");
  const refreshed = await acme.getItem(ns, "city", { refreshTtl: true });
  assert.equal(refreshed.value.fact, "Ann lives in Lisbon");
  assert.equal(await acme.getItem(ns, "nothing"), null, "a missing item is null");
  // A second put replaces the value and keeps created_at.
  await acme.putItem(ns, "colour", { fact: "Ann's favourite colour is blue, then green", kind: "preference" });
  const again = await acme.getItem(ns, "colour");
  assert.equal(again.createdAt, item.createdAt);
  assert.match(again.value.fact, /green/);
}

async function search() {
  const all = await acme.searchItems(["memories"]);
  assert.deepEqual(all.items.map((i) => i.key).sort(), ["city", "colour", "colour", "n1"]);
  const ann = await acme.searchItems(ns, { filter: { kind: "preference" } });
  assert.deepEqual(ann.items.map((i) => i.key), ["colour"]);
  const ranked = await acme.searchItems(["memories"], { query: "favourite colour" });
  assert.equal(ranked.items[0].key, "colour", "the best match first");
  assert.deepEqual(ranked.items[0].namespace, ns);
  assert.ok(ranked.items[0].score > 0, "a ranked item has a score");
  assert.ok(!ranked.items.some((i) => i.key === "n1"), "an item put with index: false is found by no query");
  const page = await acme.searchItems(["memories"], { limit: 1, offset: 1 });
  assert.equal(page.items.length, 1);
  assert.equal(page.items[0].key, all.items[1].key, "offset 1 is the second item");
}

async function namespaces() {
  const all = await acme.listNamespaces();
  assert.deepEqual(all.namespaces, [["memories", "ann"], ["memories", "ann", "notes"], ["memories", "bob"]]);
  const cut = await acme.listNamespaces({ maxDepth: 2 });
  assert.deepEqual(cut.namespaces, [["memories", "ann"], ["memories", "bob"]]);
  const notes = await acme.listNamespaces({ suffix: ["notes"] });
  assert.deepEqual(notes.namespaces, [["memories", "ann", "notes"]]);
  const bob = await acme.listNamespaces({ prefix: ["memories", "bob"] });
  assert.deepEqual(bob.namespaces, [["memories", "bob"]]);
}

async function badInput() {
  const err = await rejects(acme.putItem(["memories", ""], "k", { fact: "x" }), 422, "a namespace with an empty label");
  assert.match(err.text, /namespace\[1\]/, "the error names the label");
  await rejects(acme.putItem(ns, "", { fact: "x" }), 422, "an empty key");
  await rejects(acme.searchItems(["memories", ""]), 422, "a search prefix with an empty label");
  const all = await acme.listNamespaces();
  assert.ok(!all.namespaces.some((n) => n.includes("")), "nothing stored under an empty label");
}

async function tenancy() {
  assert.equal(await globex.getItem(ns, "colour"), null, "another tenant's item is not found");
  assert.deepEqual((await globex.searchItems(["memories"], { query: "colour" })).items, []);
  assert.deepEqual((await globex.listNamespaces()).namespaces, []);
  await globex.deleteItem(ns, "colour"); // no error, and nothing of acme's deleted
  assert.ok(await acme.getItem(ns, "colour"), "acme's item survives the other tenant's delete");
  await globex.putItem(ns, "colour", { fact: "globex's own" });
  assert.match((await acme.getItem(ns, "colour")).value.fact, /Ann/);
}

async function remove() {
  await acme.deleteItem(ns, "colour");
  assert.equal(await acme.getItem(ns, "colour"), null, "gone after delete");
  await acme.deleteItem(ns, "colour"); // a second delete is no error
  assert.equal((await globex.getItem(ns, "colour")).value.fact, "globex's own");
}

for (const [name, step] of Object.entries({ putAndGet, search, namespaces, badInput, tenancy, remove })) {
  await step();
  console.log("ok", name);
}
