// Page scenarios: agents, the research workflow's DAG, runs, a long run,
// the server page, a narrow window.
import { base, check, open, rest, shot, until } from './lib.mjs';

export async function agents(browser) {
  const page = await open(browser, `${base}/`);
  await page.waitForSelector('.card[data-agent="guarded"]');
  const { agents: list } = await rest('/v1/agents');
  const cards = await page.$$eval('.card[data-agent]', (els) => els.map((e) => e.dataset.agent));
  check(JSON.stringify(cards) === JSON.stringify(list.map((a) => a.id)), `a card per agent: ${cards}`);
  const research = await page.textContent('.card[data-agent="research"]');
  check(research.includes('graph') && research.includes('quantum computing'), 'cards show the engine and the examples');
  await shot(page, 'agents');
  await page.click('.card[data-agent="echo"] a:has-text("Chat")');
  await page.waitForSelector('textarea[aria-label="Message"]');
  check(page.url().endsWith('#/chat/echo'), `one click opens the chat (${page.url()})`);
  // An example opens the chat with it as the draft.
  await page.goBack();
  await page.click('.card[data-agent="research"] a.example');
  await page.waitForSelector('textarea[aria-label="Message"]');
  check(await page.inputValue('textarea[aria-label="Message"]') === 'quantum computing', 'the example is the draft');
  await page.context().close();
}

export async function researchDag(browser) {
  const page = await open(browser, `${base}/#/chat/research`);
  await page.fill('textarea[aria-label="Message"]', 'quantum computing');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.live[data-run]');
  const runId = await page.getAttribute('.live', 'data-run');
  await page.goto(`${base}/#/runs/${runId}`);
  await page.waitForSelector('svg.dag g.node');
  // Record every state a step shows from now on, and whether the run was
  // still going: then some step must have lit up as working first.
  const going = await page.evaluate(() => {
    window.seenStates = new Set([...document.querySelectorAll('svg.dag g.node')].map((g) => g.dataset.state));
    new MutationObserver(() => document.querySelectorAll('svg.dag g.node').forEach((g) => window.seenStates.add(g.dataset.state)))
      .observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
    return document.querySelectorAll('svg.dag g.node[data-state="completed"]').length < 7;
  });
  // Steps light up while the workflow runs, and all are completed at the end.
  await page.waitForFunction(() => document.querySelectorAll('svg.dag g.node[data-state="completed"]').length === 7, null, { timeout: 20000 });
  const steps = await page.$$eval('svg.dag g.node', (els) => els.map((e) => `${e.dataset.step}:${e.dataset.state}`));
  check(steps.length === 7, `seven steps drawn: ${steps}`);
  const seen = await page.evaluate(() => [...window.seenStates]);
  check(!going || seen.includes('working'), `steps lit up as working while the workflow ran (states seen: ${seen})`);
  if (going) console.log(`     step states seen while the workflow ran: ${seen.join(', ')}`);
  await page.waitForSelector('svg.dag a[href^="#/runs/"]'); // steps link their child runs
  await page.waitForSelector('.answer-final');
  await page.waitForSelector('table.trajectory');
  await shot(page, 'run-research');
  // A step opens its child run, which links back.
  await page.click('svg.dag a:has(g[data-step="publish"])');
  await page.waitForSelector('dd a:has-text("run")');
  // Raw JSON is one click away.
  await page.click('tr[data-seq="1"] button');
  await page.waitForSelector('tr.raw pre.json');
  await page.context().close();
}

export async function runs(browser) {
  // Enough runs for two pages, two of them guarded and completed.
  const { total } = await rest('/v1/runs?limit=1');
  for (let i = total; i < 30; i++) await rest('/v1/agents/echo/messages?wait=false', { method: 'POST', body: JSON.stringify({ text: `run ${i}` }) });
  for (const f of ['read a.txt', 'read b.txt']) await rest('/v1/agents/guarded/messages', { method: 'POST', body: JSON.stringify({ text: f }) });
  const guarded = (await rest('/v1/runs?agent=guarded&status=completed&limit=1')).total;
  const page = await open(browser, `${base}/#/runs`);
  await page.waitForSelector('table.runs tbody tr');
  const first = await page.$$eval('table.runs tbody tr', (els) => els.map((e) => e.dataset.run));
  check(first.length === 25, `a page of 25 (${first.length})`);
  await page.click('button:has-text("Older")');
  await page.waitForFunction((f) => document.querySelector('table.runs tbody tr')?.dataset.run !== f, first[0]);
  const second = await page.$$eval('table.runs tbody tr', (els) => els.map((e) => e.dataset.run));
  check(!second.some((id) => first.includes(id)), 'the next page holds other runs');
  await page.selectOption('label:has-text("Agent") select', 'guarded');
  await page.waitForFunction(() => [...document.querySelectorAll('table.runs tbody tr td:nth-child(2)')].every((td) => td.textContent === 'guarded'));
  await page.selectOption('label:has-text("Status") select', 'completed');
  await page.waitForFunction((n) => document.querySelector('p.muted')?.textContent === `${n} runs`, guarded);
  await shot(page, 'runs');
  await page.context().close();
}

export async function bigRun(browser) {
  const run = await rest('/v1/agents/echo/messages', { method: 'POST', body: JSON.stringify({ text: 'stream 10000' }) });
  const page = await open(browser, `${base}/#/agents`);
  const started = Date.now();
  await page.goto(`${base}/#/runs/${run.id}`);
  await page.waitForFunction(() => /^10\d\d\d$/.test(document.querySelector('h2 small.muted')?.textContent || ''), null, { timeout: 10000 });
  const ms = Date.now() - started;
  const rows = await page.$$eval('table.timeline tbody tr.ev', (els) => els.length);
  check(rows === 500, `the timeline renders its first 500 rows (${rows})`);
  console.log(`     a run of ${await page.textContent('h2 small.muted')} events opened in ${ms} ms`);
  check(ms < Number(process.env.BIG_RUN_MS || 4000), `opened in ${ms} ms`);
  await shot(page, 'run-10000-events');
  await page.context().close();
}

// A link followed before the console's first paint (its router listens
// from then on) still routes: the hash changes as soon as the document is
// parsed, before any effect has run.
export async function earlyLink(browser) {
  const init = () => addEventListener('DOMContentLoaded', () => { location.hash = '#/server'; });
  const page = await open(browser, `${base}/#/agents`, { init });
  await page.waitForSelector('dl.facts[data-store]');
  check(await page.$eval('nav a[aria-current="page"]', (a) => a.textContent) === 'Server', 'the navigation marks the page the hash names');
  await page.context().close();
}

export async function server(browser) {
  const page = await open(browser, `${base}/#/server`);
  await page.waitForSelector('dl.facts[data-store]');
  const text = await page.textContent('main');
  check(text.includes('memstore') && text.includes('ready'), `server facts: ${text}`);
  await page.waitForSelector('a[href="/openapi.yaml"]');
  await page.waitForSelector('a[href="/agents/guarded/.well-known/agent-card.json"]');
  await shot(page, 'server');
  await page.context().close();
}

export async function narrow(browser) {
  const page = await open(browser, `${base}/#/chat/echo`, { viewport: { width: 380, height: 760 } });
  await page.waitForSelector('textarea[aria-label="Message"]');
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 380, `no horizontal scroll in a narrow window (${wide}px)`);
  // Keyboard: the message box is reachable with Tab and sends with Enter.
  await page.focus('textarea[aria-label="Message"]');
  await page.keyboard.type('hello narrow');
  await page.keyboard.press('Enter');
  await until('the answer', () => page.$('.live[data-status="completed"]'));
  await shot(page, 'narrow');
  await page.context().close();
}

export async function effects(browser) {
  // The scout's peer tool has effects: its call's intent and result are
  // rows of the run's timeline, each naming the tool and the effect key.
  const t = await rest('/v1/agents/scout/messages', { method: 'POST', body: JSON.stringify({ text: 'ask the peer hello' }) });
  check(t.status === 'completed', `the scout's run completed (${t.status})`);
  const page = await open(browser, `${base}/#/runs/${t.id}`);
  await page.waitForSelector('tr[data-type="effect.result"]');
  const intent = await page.textContent('tr[data-type="effect.intent"] td.sum');
  check(/^ask_echo \(keyed\), key \S+/.test(intent), `the intent's row names the tool, its kind and its key: ${intent}`);
  const result = await page.textContent('tr[data-type="effect.result"] td.sum');
  check(result.startsWith('ask_echo: done, key ') && result.endsWith(intent.split('key ')[1]), `the result's row has the same key: ${result}`);
  await page.locator('tr[data-type="effect.result"]').scrollIntoViewIfNeeded();
  await shot(page, 'run-effects');
  await page.context().close();
}
