// Controls steer a live run: cancel, pause, resume and feedback (signals).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';

export function Controls({ live, onError, onResumed }) {
  const [feedback, setFeedback] = useState('');
  const act = (f, resumes) => async () => {
    try {
      await f();
      if (resumes) onResumed();
    } catch (e) { onError(e); }
  };
  const paused = live.status === 'paused';
  const sendFeedback = (e) => {
    e.preventDefault();
    if (!feedback.trim()) return;
    act(() => api.signal(live.runId, 'feedback', feedback), paused)();
    setFeedback('');
  };
  return html`<div class="controls" aria-label="Run controls">
    <button onClick=${act(() => api.cancel(live.runId), true)}>Cancel</button>
    ${paused ? html`<button onClick=${act(() => api.signal(live.runId, 'resume'), true)}>Resume</button>`
    : html`<button onClick=${act(() => api.signal(live.runId, 'pause'), true)}>Pause</button>`}
    <form class="inline" onSubmit=${sendFeedback}>
      <input aria-label="Feedback" placeholder="Feedback for the agent" value=${feedback} onInput=${(e) => setFeedback(e.target.value)} />
      <button type="submit">Send feedback</button>
    </form>
  </div>`;
}
