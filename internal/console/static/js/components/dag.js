// Dag draws a workflow's plan (the plan event) as columns by depth; each
// step is lit by its events (started, completed, failed, skipped) and
// links the child run that executed it.
import { html } from '../html.js';

// stepStates reads the steps' states from a run's events: the newest
// step.start / step.complete / step.error of each planned step.
export function stepStates(events) {
  const states = {};
  for (const ev of events) {
    if (!ev.type.startsWith('step.') || !ev.payload || !ev.payload.detail) continue;
    const d = ev.payload.detail;
    if (!d.step || d.step.includes('#')) continue; // loop iterations light their loop
    if (ev.type === 'step.start') states[d.step] = 'working';
    else if (ev.type === 'step.error') states[d.step] = 'failed';
    else states[d.step] = d.status === 'skipped' ? 'skipped' : d.status === 'failed' ? 'failed' : 'completed';
  }
  return states;
}

// depths places each step one column after its deepest dependency.
function depths(steps) {
  const byId = Object.fromEntries(steps.map((s) => [s.id, s]));
  const memo = {};
  const depth = (id, seen = new Set()) => {
    if (memo[id] !== undefined) return memo[id];
    if (seen.has(id) || !byId[id]) return 0;
    seen.add(id);
    const deps = byId[id].dependsOn || [];
    memo[id] = deps.length ? 1 + Math.max(...deps.map((d) => depth(d, seen))) : 0;
    return memo[id];
  };
  steps.forEach((s) => depth(s.id));
  return memo;
}

const W = 150; const H = 46; const GX = 60; const GY = 18;

export function Dag({ plan, states, children }) {
  const steps = plan.steps || [];
  const d = depths(steps);
  const cols = [];
  for (const s of steps) (cols[d[s.id]] = cols[d[s.id]] || []).push(s);
  const pos = {};
  cols.forEach((col, x) => col.forEach((s, y) => { pos[s.id] = { x: 10 + x * (W + GX), y: 10 + y * (H + GY) }; }));
  const width = 20 + cols.length * (W + GX) - GX;
  const height = 20 + Math.max(1, ...cols.map((c) => c.length)) * (H + GY) - GY;
  const edges = steps.flatMap((s) => (s.dependsOn || []).filter((dep) => pos[dep]).map((dep) => ({ from: pos[dep], to: pos[s.id], key: `${dep}>${s.id}` })));
  return html`<div class="dag-wrap"><svg class="dag" viewBox=${`0 0 ${width} ${height}`} width=${width} height=${height} role="img" aria-label=${`workflow ${plan.workflow || ''}`}>
    ${edges.map((e) => html`<path key=${e.key} class="edge" d=${`M${e.from.x + W},${e.from.y + H / 2} C${e.from.x + W + GX / 2},${e.from.y + H / 2} ${e.to.x - GX / 2},${e.to.y + H / 2} ${e.to.x},${e.to.y + H / 2}`} />`)}
    ${steps.map((s) => {
    const p = pos[s.id]; const state = states[s.id] || 'pending'; const child = children[s.id];
    const box = html`<g class=${`node n-${state}`} data-step=${s.id} data-state=${state} transform=${`translate(${p.x},${p.y})`}>
        <rect width=${W} height=${H} rx="6" />
        <text x="10" y="19" class="node-title">${s.id}${s.kind === 'loop' ? ' ↻' : ''}</text>
        <text x="10" y="36" class="node-sub">${s.agent || s.kind} · ${state}</text>
      </g>`;
    return child ? html`<a key=${s.id} href=${`#/runs/${child}`}>${box}</a>` : html`<g key=${s.id}>${box}</g>`;
  })}
  </svg></div>`;
}

// FlowPath shows the nodes a flow visited, in order.
export function FlowPath({ events }) {
  const path = [];
  for (const ev of events) {
    const d = ev.payload && ev.payload.detail;
    if (ev.type === 'step.start' && ev.payload.kind === 'node' && d && d.node) path.push({ node: d.node, seq: ev.seq, state: 'working' });
    if ((ev.type === 'step.complete' || ev.type === 'step.error') && ev.payload && ev.payload.kind === 'node' && d && path.length) {
      const last = path.findLast((p) => p.node === d.node);
      if (last) last.state = ev.type === 'step.error' ? 'failed' : d.waiting ? 'waiting' : 'completed';
    }
  }
  if (!path.length) return null;
  return html`<section><h2>Flow path</h2><ol class="flow-path">${path.map((p) => html`<li key=${p.seq} class=${`n-${p.state}`} data-node=${p.node}>${p.node}</li>`)}</ol></section>`;
}
