// The console's browser test: a real Chromium against a real agentd
// (cmd/server/console_browser_test.go starts it and sets AGENTD_URL, and
// AGENTD_AUTH_URL with KEY_A and KEY_B for the tenant scenario). Any page
// or console error fails the test.
import { base, check, errors, launch, open, shot } from './lib.mjs';
import * as chat from './chat.mjs';
import * as pages from './pages.mjs';
import * as tenants from './tenants.mjs';
import * as live from './live.mjs';
import * as assistants from './assistants.mjs';
import * as schedules from './schedules.mjs';

const scenarios = [
  ['live.js folds events (node)', live.fold],
  ['agents page', pages.agents],
  ['chat streams and completes', chat.streams],
  ['reload mid-stream resumes with every token once', chat.reloadResumes],
  ['approval from the inbox completes the guarded run', chat.inboxApproval],
  ['a question answered from the inbox', chat.inboxQuestion],
  ['a call in doubt answered from the inbox', chat.inboxInDoubt],
  ['approval with edited arguments in the chat', chat.editApproval],
  ['refund question answered in the chat', chat.refund],
  ['conversations listed and reopened', chat.reopen],
  ['data and file parts', chat.parts],
  ['cancel', chat.cancel],
  ['feedback to a paused run', chat.feedback],
  ['pause and resume', chat.pauseResume],
  ['research DAG lights every step', pages.researchDag],
  ['runs page filters and pages', pages.runs],
  ['a run of 10 000 events opens quickly', pages.bigRun],
  ['server page', pages.server],
  ['a link followed before the first paint routes', pages.earlyLink],
  ['tool effects in the timeline', pages.effects],
  ['assistants page', assistants.list],
  ['schedules page', schedules.list],
  ['narrow window', pages.narrow],
  ['tenants and credentials', tenants.isolation],
];

const only = process.env.ONLY ? new RegExp(process.env.ONLY) : null;
const browser = await launch();
let failed = 0;
try {
  for (const [name, run] of scenarios) {
    if (only && !only.test(name)) continue;
    const started = Date.now();
    const before = errors.length;
    try {
      await run(browser);
      check(errors.length === before, `no page or console error (${errors.slice(before).join('; ')})`);
      console.log(`ok   ${name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e.stack || e}`);
    }
  }
} finally {
  await browser.close();
}
if (errors.length) console.log(`page and console errors:\n  ${errors.join('\n  ')}`);
if (failed || errors.length) process.exit(1);
console.log(`all scenarios passed against ${base}`);
export { open, shot };
