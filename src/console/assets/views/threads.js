// Threads: the conversation kept per agent and scope, re-read when a run ends.

import { api, query, tenantPath } from '../api.js';
import { Loaded, Pager, html, useChanges, useLoad, usePager, useState, when } from '../ui.js';

/**
 * @param {{tenant: string, agent: string, scope: string, feed: import('../ui.js').ChangeFeed}} props
 */
function Conversation({ tenant, agent, scope, feed }) {
  const state = useLoad(
    (signal) =>
      api.get(
        tenantPath(tenant, `/threads/${encodeURIComponent(agent)}/${encodeURIComponent(scope)}`),
        { signal },
      ),
    [tenant, agent, scope],
  );
  useChanges(feed, state.reload, (type) => type === 'run.terminal');
  const messages = state.data?.messages ?? [];
  return html`<section class="card" aria-label=${`Conversation ${scope}`}>
    <h2>Conversation <span class="mono">${scope}</span></h2>
    <${Loaded} state=${state} empty=${messages.length === 0 && 'No messages kept.'}>
      <ol class="messages">
        ${messages.map(
          (/** @type {any} */ m) =>
            html`<li class=${`message ${m.role}`}>
              <span class="muted"
                >${m.role} · ${when(m.ts)} · <a href=${`#/runs/${m.run_id}`}>run</a></span
              >
              <p>${m.content}</p>
            </li>`,
        )}
      </ol>
    <//>
  </section>`;
}

/** @param {import('../ui.js').ViewProps} props */
export function ThreadsView({ tenant, feed }) {
  const agents = useLoad((signal) => api.get(tenantPath(tenant, '/agents'), { signal }), [tenant]);
  const [agent, setAgent] = useState('');
  const [scope, setScope] = useState(/** @type {string | null} */ (null));
  const pager = usePager();
  const names = (agents.data?.agents ?? []).map((/** @type {any} */ a) => a.name);
  const chosen = agent || names[0] || '';
  const state = useLoad(
    (signal) =>
      chosen
        ? api.get(
            tenantPath(tenant, `/threads/${chosen}${query({ limit: 50, cursor: pager.cursor })}`),
            { signal },
          )
        : Promise.resolve({ threads: [], next_cursor: null }),
    [tenant, chosen, pager.cursor],
  );
  useChanges(feed, state.reload, (type) => type === 'run.terminal');
  const threads = state.data?.threads ?? [];
  // The agents come first: their loading, error and empty states are the view's own.
  return html`<h1>Threads</h1>
    <${Loaded} state=${agents} empty=${names.length === 0 && 'No agents, so no threads yet.'}>
      <div class="filters">
        <label
          >Agent
          <select
            value=${chosen}
            onChange=${(/** @type {any} */ e) => {
              pager.reset();
              setScope(null);
              setAgent(e.currentTarget.value);
            }}
          >
            ${names.map((/** @type {string} */ n) => html`<option value=${n}>${n}</option>`)}
          </select></label
        >
      </div>
      <${Loaded} state=${state} empty=${threads.length === 0 && 'No threads for this agent yet.'}>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Scope</th>
                <th scope="col">Turns</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              ${threads.map(
                (/** @type {any} */ t) =>
                  html`<tr key=${t.scope}>
                    <td>
                      <button type="button" class="link mono" onClick=${() => setScope(t.scope)}>
                        ${t.scope}
                      </button>
                    </td>
                    <td>${t.turns}</td>
                    <td>${when(t.updated_at)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>
      <//>
      <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="Threads" />
      ${
        scope &&
        html`<${Conversation} tenant=${tenant} agent=${chosen} scope=${scope} feed=${feed} />`
      }
    <//>`;
}
