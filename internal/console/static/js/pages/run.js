// Run: one run — its answer and artifacts, its workflow DAG or flow path,
// its trajectory and its event timeline, followed live.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api, follow } from '../api.js';
import { Artifacts, ErrorNote, Json, Part, Status } from '../components/common.js';
import { Dag, FlowPath, stepStates } from '../components/dag.js';
import { Timeline } from '../components/timeline.js';
import { Trajectory } from '../components/trajectory.js';
import { cost, runDuration, short, terminal, tokens } from '../format.js';

export function Run({ runId }) {
  const [run, setRun] = useState(null);
  const [events, setEvents] = useState([]);
  const [traj, setTraj] = useState(null);
  const [children, setChildren] = useState({});
  const [error, setError] = useState(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const ctl = new AbortController();
    let last = 0;
    setEvents([]);
    let timer;
    const refresh = () => api.run(runId).then((r) => { setRun(r); return r; });
    // Events are shown once per animation frame, however many batches
    // came: a long log renders a few times, not once per network read.
    let pending = [];
    const flush = () => { const b = pending; pending = []; setEvents((e) => e.concat(b)); };
    const onBatch = (b) => {
      last = b[b.length - 1].seq;
      if (!pending.length) requestAnimationFrame(flush);
      for (const ev of b) pending.push(ev);
    };
    const loop = () => follow(runId, last, onBatch, ctl.signal)
      .then(refresh)
      .then((r) => {
        api.trajectory(runId).then(setTraj, () => {});
        if (!terminal(r.status)) timer = setTimeout(loop, 1000); // parked or paused: look again
      }, (e) => { if (e.name !== 'AbortError') setError(e); });
    refresh().then(loop, setError);
    return () => { ctl.abort(); clearTimeout(timer); };
  }, [runId, tick]);

  // The latest plan: a goal run's edited plan, a resumed workflow's own.
  const plan = events.findLast((e) => e.type === 'plan');
  useEffect(() => {
    if (!plan || !run) return;
    api.runs({ agent: run.agent_id, limit: 100 }).then((p) => {
      const m = {};
      for (const r of p.runs) if (r.metadata && r.metadata.parent_run_id === runId) m[r.metadata.parent_step.split('#')[0]] = r.id;
      setChildren(m);
    }, () => {});
  }, [!!plan, run && run.status]);

  if (!run) return html`<h1>Run ${short(runId)}</h1><${ErrorNote} error=${error} />`;
  const answer = (run.messages || []).filter((m) => m.role === 'assistant').slice(-1)[0];
  const parent = run.metadata && run.metadata.parent_run_id;
  const act = (f) => () => f().then(() => setTick(tick + 1), setError);
  return html`<h1>Run <code>${short(run.id)}</code> <${Status} status=${run.status} /></h1>
    <${ErrorNote} error=${error} />
    <dl class="facts">
      <dt>agent</dt><dd>${run.agent_id}</dd>
      <dt>conversation</dt><dd><a href=${`#/chat/${encodeURIComponent(run.agent_id)}?context=${encodeURIComponent(run.context_id)}`}>${short(run.context_id)}</a></dd>
      ${parent ? html`<dt>part of</dt><dd><a href=${`#/runs/${parent}`}>run ${short(parent)}</a>, step ${run.metadata.parent_step}</dd>` : null}
      <dt>attempts</dt><dd>${run.attempt}</dd>
      <dt>duration</dt><dd>${runDuration(run)}</dd>
      <dt>usage</dt><dd>${tokens(run.usage) || '0 tok'} ${cost(run.cost)}</dd>
    </dl>
    ${!terminal(run.status) ? html`<div class="buttons">
      <button onClick=${act(() => api.cancel(run.id))}>Cancel</button>
      ${run.status === 'paused' ? html`<button onClick=${act(() => api.signal(run.id, 'resume'))}>Resume</button>` : html`<button onClick=${act(() => api.signal(run.id, 'pause'))}>Pause</button>`}
    </div>` : null}
    ${run.error ? html`<p class="note error">${run.error.class}: ${run.error.message}</p>` : null}
    ${plan ? html`<section><h2>Workflow ${plan.plan.workflow}</h2><${Dag} plan=${plan.plan} states=${stepStates(events)} children=${children} /></section>` : null}
    <${FlowPath} events=${events} />
    ${answer ? html`<section class="answer-final"><h2>Answer</h2>${answer.parts.map((p, i) => html`<${Part} key=${i} part=${p} />`)}</section>` : null}
    <${Artifacts} artifacts=${run.artifacts} />
    <${Trajectory} t=${traj} />
    <section><h2>Events <small class="muted">${events.length}</small></h2><${Timeline} events=${events} /></section>
    <details class="rawrun"><summary>Raw run JSON</summary><${Json} value=${run} /></details>`;
}
