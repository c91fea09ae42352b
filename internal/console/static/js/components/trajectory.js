// Trajectory: the run's model and tool steps with durations, tokens,
// cost, governance verdicts and approval decisions.
import { html } from '../html.js';
import { cost, duration } from '../format.js';

export function Trajectory({ t }) {
  if (!t || !t.steps.length) return null;
  return html`<section><h2>Trajectory</h2><div class="table-wrap"><table class="trajectory">
    <thead><tr><th>attempt</th><th>step</th><th>what</th><th>duration</th><th>tokens in/out</th><th>cost</th><th>governance</th></tr></thead>
    <tbody>${t.steps.map((s, i) => html`<tr key=${i} data-kind=${s.type}>
      <td>${s.attempt}</td><td>${s.type}</td>
      <td>${s.type === 'tool' ? html`<b>${s.tool}</b> <code>${JSON.stringify(s.arguments || {})}</code> → ${s.error || s.result || ''}` : `${s.model || s.actor} ${s.finish_reason || ''}`}</td>
      <td>${duration(s.duration_ms)}</td>
      <td>${s.type === 'model' ? `${s.input_tokens || 0}/${s.output_tokens || 0}` : ''}</td>
      <td>${cost(s.cost)}</td>
      <td>${(s.governance || []).map((g) => `${g.verdict} (${g.source})`).join(', ')}</td>
    </tr>`)}</tbody></table></div>
    <p class="muted">total: ${t.usage.total_tokens || 0} tokens${t.cost != null ? `, ${cost(t.cost)}` : ''}</p></section>`;
}
