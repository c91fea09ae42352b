// The Assistants page: an assistant made over the REST API, then updated,
// is listed at its latest version with what it overrides; its row opens
// both versions.
import { base, check, open, rest, shot } from './lib.mjs';

export async function list(browser) {
  const a = await rest('/v1/assistants', {
    method: 'POST',
    body: JSON.stringify({ agent_id: 'assistant', name: 'ada', description: 'answers as Ada', context: { system_prompt: 'You are Ada.', temperature: 0.2 } }),
  });
  await rest(`/v1/assistants/${a.id}`, { method: 'PATCH', body: JSON.stringify({ context: { system_prompt: 'You are Ada, briefly.', tools: ['clock'] } }) });
  const page = await open(browser, `${base}/#/assistants?agent=assistant`);
  const row = `tr[data-assistant="${a.id}"]`;
  await page.waitForSelector(row);
  const text = await page.textContent(row);
  check(text.includes('ada') && text.includes('system_prompt, tools'), `the assistant's row: ${text}`);
  await page.click(`${row} button`);
  await page.waitForSelector('li[data-version="1"]');
  const versions = await page.textContent('ol.versions');
  check(versions.includes('version 2 (latest)') && versions.includes('You are Ada.'), `versions: ${versions}`);
  await shot(page, 'assistants');
  await page.context().close();
}
