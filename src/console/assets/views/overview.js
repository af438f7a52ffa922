// Overview: the tenant's figures (GET T/overview — the numbers /metrics exports),
// re-read when a run changes, and the "submit a turn" box.

import { api, tenantPath } from '../api.js';
import { Loaded, duration, html, useChanges, useLoad } from '../ui.js';
import { TurnBox } from './turn.js';

/** @param {{label: string, value: unknown, tone?: string}} props */
function Figure({ label, value, tone }) {
  return html`<div class=${`figure ${tone ?? ''}`}>
    <span class="figure-value">${value}</span><span class="figure-label">${label}</span>
  </div>`;
}

/** @param {import('../ui.js').ViewProps} props */
export function OverviewView({ tenant, feed }) {
  const state = useLoad((signal) => api.get(tenantPath(tenant, '/overview'), { signal }), [tenant]);
  useChanges(feed, state.reload, (type) => type !== 'run.event');
  const o = state.data;
  return html`<h1>Overview</h1>
    <${Loaded} state=${state}>
      ${
        o &&
        html`<section aria-label="Figures" class="figures" data-testid="figures">
          ${Object.entries(o.runs_by_status).map(
            ([status, n]) => html`<${Figure} label=${`runs ${status}`} value=${n} />`,
          )}
          <${Figure} label="queue depth" value=${o.queue_depth} />
          <${Figure} label="oldest queued" value=${duration(o.oldest_queued_age_ms)} />
          <${Figure}
            label="deliveries dead"
            value=${o.deliveries_dead}
            tone=${o.deliveries_dead > 0 ? 'warn' : ''}
          />
          <${Figure}
            label="schedules failing"
            value=${o.schedules_failing}
            tone=${o.schedules_failing > 0 ? 'warn' : ''}
          />
        </section>`
      }
    <//>
    <${TurnBox} tenant=${tenant} />`;
}
