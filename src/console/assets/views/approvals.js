// Approvals: the tool calls of the tenant's runs that wait for a person (docs/approvals.md),
// oldest first — the tool, its arguments, what the run was asked, agent, scope, how long
// it has waited — each with Approve and Deny (an optional reason, which a denial gives
// the model). Re-read when a run changes; the run view shows the same card for its run.

import { api, tenantPath } from '../api.js';
import { ErrorBox, Loaded, html, useChanges, useLoad, useState, when } from '../ui.js';

/** How long ago an ISO time was, coarsely: `40 s`, `12 min`, `5 h`, `3 d`. */
export function age(/** @type {string} */ iso) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 120 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

/** The arguments as the model sent them, indented when they are JSON. */
function readableArguments(/** @type {string} */ text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * One pending call with its decision buttons. `input` is the run's input text (the
 * approvals list carries it; the run view shows the run's own above the card).
 * @param {{tenant: string, approval: any, input?: string | null, showRun?: boolean, onDecided: (approval: any) => void}} props
 */
export function ApprovalCard({ tenant, approval, input, showRun = false, onDecided }) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState(/** @type {unknown} */ (null));
  const path = tenantPath(
    tenant,
    `/runs/${encodeURIComponent(approval.run_id)}/approvals/${encodeURIComponent(approval.call_id)}`,
  );

  async function decide(/** @type {'approve' | 'deny'} */ decision) {
    setBusy(true);
    setProblem(null);
    try {
      const body = note.trim() ? { decision, note: note.trim() } : { decision };
      onDecided((await api.post(path, body)).approval);
    } catch (error) {
      // 409 APPROVAL_DECIDED: someone else (another tab, Telegram, the CLI) was first.
      setProblem(error);
    } finally {
      setBusy(false);
    }
  }

  return html`<section
    class="card approval"
    aria-label=${`Approval of ${approval.tool} for run ${approval.run_id}`}
    data-testid="approval"
    data-run=${approval.run_id}
  >
    <h2><span class="mono">${approval.tool}</span> waits for a decision</h2>
    <dl class="facts">
      ${
        showRun &&
        html`<div>
          <dt>Run</dt>
          <dd>
            <a class="mono" href=${`#/runs/${approval.run_id}`}>${approval.run_id.slice(-12)}</a>
          </dd>
        </div>`
      }
      <div>
        <dt>Agent</dt>
        <dd>${approval.agent}</dd>
      </div>
      <div>
        <dt>Scope</dt>
        <dd class="mono">${approval.scope}</dd>
      </div>
      <div>
        <dt>Waiting</dt>
        <dd title=${approval.requested_at}>${age(approval.requested_at)}</dd>
      </div>
      <div>
        <dt>Times out</dt>
        <dd>${approval.expires_at ? when(approval.expires_at) : 'never'}</dd>
      </div>
      <div>
        <dt>Call</dt>
        <dd class="mono">${approval.call_id}</dd>
      </div>
    </dl>
    <h3>Arguments</h3>
    <pre class="mono" data-testid="approval-arguments">
${readableArguments(approval.arguments)}</pre>
    ${
      typeof input === 'string' &&
      html`<h3>The run was asked</h3>
        <pre class="output" data-testid="approval-input">${input}</pre>`
    }
    <div class="decide">
      <label
        >Reason (optional; a denial tells the model)
        <input
          name="note"
          maxlength="4000"
          value=${note}
          onInput=${(/** @type {any} */ e) => setNote(e.currentTarget.value)}
      /></label>
      <button type="button" disabled=${busy} onClick=${() => decide('approve')}>Approve</button>
      <button type="button" class="danger" disabled=${busy} onClick=${() => decide('deny')}>
        Deny
      </button>
    </div>
    ${problem && html`<${ErrorBox} error=${problem} />`}
  </section>`;
}

/** @param {import('../ui.js').ViewProps} props */
export function ApprovalsView({ tenant, feed }) {
  const state = useLoad(
    (signal) => api.get(tenantPath(tenant, '/approvals?limit=100'), { signal }),
    [tenant],
  );
  // A request, a decision, a timeout and a cancel each change a run: re-read (at most
  // once a second) on any of them.
  useChanges(
    feed,
    state.reload,
    (type) => type === 'run.event' || type === 'run.queued' || type === 'run.terminal',
  );
  const [said, setSaid] = useState('');
  const approvals = state.data?.approvals ?? [];
  const decided = (/** @type {any} */ approval) => {
    setSaid(`${approval.tool} of run ${approval.run_id.slice(-12)} ${approval.status}`);
    state.reload();
  };
  return html`<h1>Approvals</h1>
    <p class="muted">Tool calls waiting for a person, oldest first.</p>
    <p role="status" class="muted" data-testid="approval-said">${said}</p>
    <${Loaded} state=${state} empty=${approvals.length === 0 && 'Nothing waits for approval.'}>
      ${approvals.map(
        (/** @type {any} */ a) =>
          html`<${ApprovalCard}
            key=${`${a.run_id}/${a.call_id}`}
            tenant=${tenant}
            approval=${a}
            input=${a.input_text}
            showRun=${true}
            onDecided=${decided}
          />`,
      )}
    <//>`;
}
