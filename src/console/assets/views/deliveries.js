// Deliveries: the outbox by status (pending, claimed, delivered, failed, dead), each
// with its attempts and last error; a dead one can be handed back (POST …/retry).

import { api, query, tenantPath } from '../api.js';
import {
  ErrorBox,
  Loaded,
  Pager,
  StatusBadge,
  html,
  resourceIs,
  useChanges,
  useLoad,
  usePager,
  useState,
  when,
} from '../ui.js';

const STATUSES = ['pending', 'claimed', 'delivered', 'failed', 'dead'];

/** @param {import('../ui.js').ViewProps} props */
export function DeliveriesView({ tenant, feed }) {
  const [status, setStatus] = useState('');
  const pager = usePager();
  const state = useLoad(
    (signal) =>
      api.get(
        tenantPath(tenant, `/deliveries${query({ status, limit: 50, cursor: pager.cursor })}`),
        { signal },
      ),
    [tenant, status, pager.cursor],
  );
  const deliveryChanged = resourceIs('delivery');
  useChanges(
    feed,
    state.reload,
    (type, data) => type === 'run.terminal' || deliveryChanged(type, data),
  );
  const [problem, setProblem] = useState(/** @type {unknown} */ (null));
  const [note, setNote] = useState('');
  const deliveries = state.data?.deliveries ?? [];

  async function retry(/** @type {string} */ id) {
    setProblem(null);
    try {
      await api.post(tenantPath(tenant, `/deliveries/${id}/retry`), {});
      setNote(`delivery ${id.slice(-12)} is pending again`);
      state.reload();
    } catch (error) {
      setProblem(error);
    }
  }

  return html`<h1>Deliveries</h1>
    <div class="filters">
      <label
        >Status
        <select
          name="status"
          value=${status}
          onChange=${(/** @type {any} */ e) => {
            pager.reset();
            setStatus(e.currentTarget.value);
          }}
        >
          <option value="">any</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select></label
      >
    </div>
    ${problem && html`<${ErrorBox} error=${problem} />`}
    <p role="status" class="muted">${note}</p>
    <${Loaded} state=${state} empty=${deliveries.length === 0 && 'No deliveries.'}>
      <div class="table-wrap">
        <table data-testid="deliveries-table">
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Status</th>
              <th scope="col">Destination</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Updated</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            ${deliveries.map(
              (/** @type {any} */ d) =>
                html`<tr key=${d.delivery_id} data-status=${d.status}>
                  <td class="mono">
                    ${d.delivery_id.slice(-12)} <a href=${`#/runs/${d.run_id}`}>run</a>
                  </td>
                  <td><${StatusBadge} status=${d.status} /></td>
                  <td class="mono">${d.destination}</td>
                  <td>${d.attempt}</td>
                  <td class=${d.last_error ? 'bad' : ''}>${d.last_error ?? '—'}</td>
                  <td>${when(d.updated_at)}</td>
                  <td>
                    ${
                      d.status === 'dead' &&
                      html`<button type="button" onClick=${() => retry(d.delivery_id)}>
                        Retry
                      </button>`
                    }
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    <//>
    <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="Deliveries" />`;
}
