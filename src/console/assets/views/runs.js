// Runs: filters (agent, scope, status, source), keyset paging 50 at a time — the
// browser only ever holds one page, however many runs exist — re-read on changes.

import { api, query, tenantPath } from '../api.js';
import {
  Loaded,
  Pager,
  StatusBadge,
  html,
  useChanges,
  useLoad,
  usePager,
  useState,
  when,
} from '../ui.js';

const STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];
const SOURCES = ['api', 'schedule'];
const PAGE = 50;

/** @param {import('../ui.js').ViewProps} props */
export function RunsView({ tenant, feed }) {
  const [filter, setFilter] = useState({ agent: '', scope: '', status: '', source: '' });
  const pager = usePager();
  const agents = useLoad((signal) => api.get(tenantPath(tenant, '/agents'), { signal }), [tenant]);
  const state = useLoad(
    (signal) =>
      api.get(
        tenantPath(tenant, `/runs${query({ ...filter, limit: PAGE, cursor: pager.cursor })}`),
        {
          signal,
        },
      ),
    [tenant, filter, pager.cursor],
  );
  useChanges(feed, state.reload, (type) => type === 'run.queued' || type === 'run.terminal');
  const set = (/** @type {string} */ key) => (/** @type {any} */ e) => {
    pager.reset();
    setFilter({ ...filter, [key]: e.currentTarget.value });
  };
  const runs = state.data?.runs ?? [];
  return html`<h1>Runs</h1>
    <form class="filters" role="search" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
      <label
        >Agent
        <select name="agent" value=${filter.agent} onChange=${set('agent')}>
          <option value="">any</option>
          ${(agents.data?.agents ?? []).map(
            (/** @type {any} */ a) => html`<option value=${a.name}>${a.name}</option>`,
          )}
        </select></label
      >
      <label>Scope <input name="scope" value=${filter.scope} onChange=${set('scope')} /></label>
      <label
        >Status
        <select name="status" value=${filter.status} onChange=${set('status')}>
          <option value="">any</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select></label
      >
      <label
        >Source
        <select name="source" value=${filter.source} onChange=${set('source')}>
          <option value="">any</option>
          ${SOURCES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select></label
      >
    </form>
    <${Loaded} state=${state} empty=${runs.length === 0 && 'No runs match.'}>
      <div class="table-wrap">
        <table data-testid="runs-table">
          <caption class="sr-only">
            Runs, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col">Scope</th>
              <th scope="col">Source</th>
              <th scope="col">Steps</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            ${runs.map(
              (/** @type {any} */ run) =>
                html`<tr key=${run.run_id}>
                  <td>
                    <a class="mono" href=${`#/runs/${run.run_id}`}>${run.run_id.slice(-12)}</a>
                  </td>
                  <td><${StatusBadge} status=${run.status} /></td>
                  <td>${run.agent}</td>
                  <td class="mono">${run.scope}</td>
                  <td>${run.source}</td>
                  <td>${run.steps}</td>
                  <td>${when(run.created_at)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    <//>
    <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="Runs" />`;
}
