// "Submit a turn": POST T/turns, then the answer streams in from the run's events
// (model.delta chunks, then the final output), with a link to the full run view.

import { api, follow, tenantPath } from '../api.js';
import { ErrorBox, html, useEffect, useLoad, useState } from '../ui.js';

const TERMINAL = new Set(['run.succeeded', 'run.failed', 'run.cancelled']);

/** @typedef {import('../../../events.ts').StreamEvent} StreamEvent */

/** @param {{tenant: string}} props */
export function TurnBox({ tenant }) {
  const agents = useLoad((signal) => api.get(tenantPath(tenant, '/agents'), { signal }), [tenant]);
  const [agent, setAgent] = useState('');
  const [scope, setScope] = useState('console');
  const [text, setText] = useState('');
  const [runId, setRunId] = useState(/** @type {string | null} */ (null));
  const [answer, setAnswer] = useState('');
  const [status, setStatus] = useState('');
  const [error, setError] = useState(/** @type {unknown} */ (null));
  const names = (agents.data?.agents ?? []).map((/** @type {any} */ a) => a.name);
  const chosen = agent || names[0] || '';

  useEffect(() => {
    if (!runId) return;
    return follow(tenantPath(tenant, `/runs/${runId}/events`), {
      isLast: (type) => TERMINAL.has(type),
      onEvent(type, /** @type {StreamEvent} */ event) {
        if (event.type === 'model.delta') {
          const { text, whole } = event.data;
          // `whole`: the call's whole text (this page missed its deltas): it replaces.
          setAnswer((old) => (whole ? text : old + text));
        } else if (event.type === 'model.request') setAnswer('');
        else if (event.type === 'run.succeeded') {
          const output = event.data.output;
          setAnswer(typeof output.reply === 'string' ? output.reply : JSON.stringify(output));
        }
        if (TERMINAL.has(type) || type === 'run.claimed') setStatus(type.slice(4));
      },
      onState: (state, problem) => state === 'error' && setError(problem),
    });
  }, [runId]);

  async function submit(/** @type {Event} */ event) {
    event.preventDefault();
    setError(null);
    setAnswer('');
    try {
      const body = await api.post(tenantPath(tenant, '/turns'), {
        agent: chosen,
        scope,
        payload: { text },
        // The events are followed next: the run streams under stream = "when-watched" too.
        follow: true,
      });
      setStatus(body.status);
      setRunId(body.run_id);
    } catch (caught) {
      setError(caught);
    }
  }

  return html`<section class="card turn" aria-labelledby="turn-title">
    <h2 id="turn-title">Submit a turn</h2>
    <form onSubmit=${submit} class="form-grid">
      <label
        >Agent
        <select
          name="agent"
          value=${chosen}
          onChange=${(/** @type {any} */ e) => setAgent(e.currentTarget.value)}
        >
          ${names.map((/** @type {string} */ name) => html`<option value=${name}>${name}</option>`)}
        </select></label
      >
      <label
        >Scope
        <input
          name="scope"
          value=${scope}
          required
          onInput=${(/** @type {any} */ e) => setScope(e.currentTarget.value)}
      /></label>
      <label class="wide"
        >Message
        <textarea
          name="text"
          rows="3"
          required
          value=${text}
          onInput=${(/** @type {any} */ e) => setText(e.currentTarget.value)}
        ></textarea>
      </label>
      <div class="wide">
        <button type="submit" disabled=${!chosen}>Send</button>
        ${
          runId &&
          html` <a href=${`#/runs/${runId}`} data-testid="turn-run-link">Open run</a>
            <span class="muted"> ${status}</span>`
        }
      </div>
    </form>
    ${error && html`<${ErrorBox} error=${error} />`}
    <pre class="answer" aria-live="polite" data-testid="turn-answer">${answer}</pre>
  </section>`;
}
