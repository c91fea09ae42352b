// Helpers of the console's browser test: Chromium, pages that fail the
// test on any script or console error, screenshots, and REST calls from
// node to check what the pages show against the server's own records.
import { chromium } from 'playwright-core';

export const base = process.env.AGENTD_URL;
export const shots = process.env.SCREENSHOT_DIR || '/tmp';

export function check(cond, msg) {
  if (!cond) throw new Error(`check failed: ${msg}`);
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// errors collects every page error and console error of every page.
export const errors = [];

// allowed are console errors a scenario expects: a refused request
// (401, 404) logs "Failed to load resource" in Chromium.
let allowed = null;
export function expectRefusals(re) { allowed = re; }

// open opens url in a fresh browser context (its own sessionStorage);
// opts.init runs in the page before its own scripts.
export async function open(browser, url, opts = {}) {
  const ctx = await browser.newContext({ viewport: opts.viewport || { width: 1280, height: 860 } });
  if (opts.init) await ctx.addInitScript(opts.init);
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);
  page.on('pageerror', (e) => errors.push(`page error on ${page.url()}: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (allowed && allowed.test(m.text())) return;
    errors.push(`console error on ${page.url()}: ${m.text()}`);
  });
  await page.goto(url);
  return page;
}

export async function shot(page, name) {
  await page.screenshot({ path: `${shots}/${name}.png` });
}

export async function rest(path, init = {}, key = '') {
  const headers = { 'Content-Type': 'application/json', ...(key ? { Authorization: `Bearer ${key}` } : {}) };
  const res = await fetch(base + path, { ...init, headers });
  const body = await res.json();
  if (!res.ok) throw new Error(`${init.method || 'GET'} ${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

// log reads a run's whole event log as the server stores it.
export async function log(runId) {
  const res = await fetch(`${base}/v1/runs/${runId}/events`);
  const text = await res.text();
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
}

// until polls f until it returns a truthy value, or fails after ms.
export async function until(what, f, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// send types a message in the chat and sends it.
export async function send(page, text) {
  await page.fill('textarea[aria-label="Message"]', text);
  await page.keyboard.press('Enter');
}

// liveDone waits for the chat's live run to reach status and returns it.
export async function liveStatus(page, status, ms = 15000) {
  await page.waitForSelector(`.live[data-status="${status}"]`, { timeout: ms });
  return page.getAttribute('.live', 'data-run');
}

export const streamed = (page) => page.$$eval('.live .msg.streamed .text', (els) => els.map((e) => e.textContent).join(''));
