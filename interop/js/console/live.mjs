// live.js, the chat's fold of a run's events, checked in node without a
// browser: what a replayed or resumed batch must not double, and how
// questions, approvals, pauses and answers show.
import { answered, apply, newLive, question } from '../../../internal/console/static/js/live.js';
import { check } from './lib.mjs';

const at = (seq, type, body = {}) => ({ run_id: 'r', seq, type, time: '2026-01-01T00:00:00Z', ...body });

export async function fold() {
  const evs = [
    at(1, 'run.start', { attempt: 1 }),
    at(2, 'delta', { actor: 'a', text: 'tok1' }),
    at(3, 'delta', { actor: 'b', text: 'x' }), // a parallel step
    at(4, 'delta', { actor: 'a', text: ' tok2' }),
    at(5, 'step.complete', { actor: 'a' }),
    at(6, 'delta', { actor: 'a', tool_call: { id: 'c1', name: 'lookup', arguments: {} } }),
    at(7, 'governance', { payload: { call_id: 'c1', verdict: 'allow', source: 'default' } }),
    at(8, 'delta', { actor: 'a', tool_result: { tool_call_id: 'c1', content: 'found' } }),
    at(9, 'artifact', { artifact: { id: 'x', parts: [{ type: 'text', text: 'one' }] } }),
    at(10, 'artifact', { artifact: { id: 'x', parts: [{ type: 'text', text: 'two' }] }, append: true }),
  ];
  const whole = apply(newLive('r', 'hi'), evs);
  // The same events in two batches that overlap (a resume that replays
  // some of what was shown) fold to the same state.
  const split = apply(apply(newLive('r', 'hi'), evs.slice(0, 6)), evs.slice(3));
  check(JSON.stringify(whole) === JSON.stringify(split), 'an overlapping batch changes nothing');
  const texts = whole.blocks.filter((b) => b.type === 'text').map((b) => `${b.actor}:${b.text}`);
  check(JSON.stringify(texts) === JSON.stringify(['a:tok1 tok2', 'b:x']), `text per actor: ${texts}`);
  const tool = whole.blocks.find((b) => b.type === 'tool');
  check(tool.result.content === 'found' && tool.verdicts[0].verdict === 'allow', 'the tool call has its result and verdict');
  check(whole.artifacts[0].parts.length === 2, 'an appended artifact grows');
  check(whole.lastSeq === 10 && whole.blocks[0].text === 'hi', 'the last seq and the first message');

  // A question, its answer shown when the next attempt starts, then a pause.
  const prompt = { role: 'assistant', parts: [{ type: 'text', text: 'Which order?' }] };
  let l = apply(whole, [at(11, 'input', { prompt }), at(12, 'status', { state: 'input-required', message: prompt }), at(13, 'run.end', { state: 'input-required' })]);
  check(question(l) && question(l).approvals.length === 0, 'the run asks');
  l = answered(l, 'A-1001');
  l = apply(l, [at(14, 'run.start', { attempt: 2, resumed: 'input' }), at(15, 'status', { state: 'working' })]);
  const last = l.blocks.slice(-2).map((b) => `${b.type}:${b.text}`);
  check(JSON.stringify(last) === JSON.stringify(['question:Which order?', 'user:A-1001']), `question then answer: ${last}`);
  const paused = { role: 'assistant', parts: [{ type: 'data', data: { paused: { by: 'user' } } }] };
  l = apply(l, [at(16, 'status', { state: 'input-required', message: paused }), at(17, 'run.end', { state: 'input-required' })]);
  check(l.status === 'paused' && !question(l), `a pause is not a question (${l.status})`);

  // An approval prompt is answered in its box, not shown as a question.
  const ask = { role: 'assistant', parts: [{ type: 'text', text: 'Approval needed' }, { type: 'data', data: { pending_approvals: [{ call_id: 'c2', tool: 'delete_file' }] } }] };
  l = apply(newLive('r2'), [at(1, 'input', { prompt: ask }), at(2, 'status', { state: 'input-required', message: ask })]);
  check(question(l).approvals[0].call_id === 'c2' && !l.blocks.some((b) => b.type === 'question'), 'approvals are answered in their box');
}
