// With API keys configured: the console asks for a key, keeps it for the
// tab only, says 401 and 404 plainly, and tenant B never sees tenant A's
// runs.
import { check, expectRefusals, open, shot } from './lib.mjs';

const authBase = process.env.AGENTD_AUTH_URL;

async function signIn(page, key) {
  await page.waitForSelector('form.signin');
  await page.fill('form.signin input', key);
  await page.click('form.signin button');
}

export async function isolation(browser) {
  if (!authBase) throw new Error('AGENTD_AUTH_URL is not set');
  expectRefusals(/Failed to load resource: the server responded with a status of (401|404)/);
  try {
    // A wrong key: the console says so, and asks again.
    const a = await open(browser, `${authBase}/#/runs`);
    await signIn(a, 'not-a-key');
    await a.waitForSelector('form.signin');
    await a.waitForSelector('.note.unauthorized');
    await shot(a, 'signin');
    await signIn(a, process.env.KEY_A);
    await a.waitForSelector('table.runs');
    // Tenant A chats; the key never lands in the URL or a cookie.
    await a.goto(`${authBase}/#/chat/echo`);
    await a.fill('textarea[aria-label="Message"]', 'a secret of tenant A');
    await a.keyboard.press('Enter');
    await a.waitForSelector('.live[data-status="completed"]');
    const runA = await a.getAttribute('.live', 'data-run');
    check(!a.url().includes(process.env.KEY_A), 'the key is not in the URL');
    check((await a.context().cookies()).length === 0, 'no cookie is set');
    await a.goto(`${authBase}/#/runs`);
    await a.waitForSelector(`tr[data-run="${runA}"]`);

    // Tenant B, in another tab session: none of A's runs, A's run is not found.
    const b = await open(browser, `${authBase}/#/runs`);
    await signIn(b, process.env.KEY_B);
    await b.waitForSelector('table.runs');
    check(await b.textContent('p.muted') === '0 runs', `tenant B sees no run: ${await b.textContent('p.muted')}`);
    await b.goto(`${authBase}/#/runs/${runA}`);
    await b.waitForSelector('.note.error');
    check((await b.textContent('.note.error')).includes('not found'), 'A\'s run is not found for B');
    // A's run waiting for approval is in A's inbox only.
    const res = await fetch(`${authBase}/v1/agents/guarded/messages`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': process.env.KEY_A }, body: JSON.stringify({ text: 'delete secret.txt' }),
    });
    const waiting = await res.json();
    check(waiting.status === 'input-required', `A's guarded run waits (${waiting.status})`);
    await a.goto(`${authBase}/#/inbox`);
    await a.waitForSelector(`.inbox-item[data-run="${waiting.id}"]`);
    await b.goto(`${authBase}/#/inbox`);
    await b.waitForSelector('main p.muted:has-text("Nothing waits for you.")');
    await b.goto(`${authBase}/#/chat/echo`);
    await b.waitForSelector('.conversations');
    check(await b.$$eval('.conversations li', (els) => els.length) === 0, 'B lists no conversation');
    await shot(b, 'tenant-b');
    await a.context().close();
    await b.context().close();
  } finally {
    expectRefusals(null);
  }
}
