// The Schedules page: read-only, it lists the schedules the API holds —
// agent, expression, time zone, input, conversation, next tick.
import { base, check, open, rest, shot } from './lib.mjs';

export async function list(browser) {
  const made = await rest('/v1/schedules', {
    method: 'POST',
    body: JSON.stringify({ agent_id: 'echo', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', text: 'morning digest' }),
  });
  try {
    const page = await open(browser, `${base}/#/schedules`);
    await page.waitForSelector(`tr[data-schedule="${made.id}"]`);
    const row = await page.textContent(`tr[data-schedule="${made.id}"]`);
    for (const want of ['echo', '0 9 * * 1-5', 'Europe/Paris', 'morning digest', 'new per tick']) {
      check(row.includes(want), `the schedule's row shows ${want}: ${row}`);
    }
    check(await page.$$eval('main button, main form', (els) => els.filter((e) => !/Previous|Next/.test(e.textContent)).length) === 0,
      'the page is read-only (no form, no button but paging)');
    await shot(page, 'schedules');
    await page.context().close();
  } finally {
    await fetch(`${base}/v1/schedules/${made.id}`, { method: 'DELETE' });
  }
}
