// MCP servers: each server of the tenant, whether it is enabled, its transport, the
// tools it offers (and which are allowed) and its last discovery error; re-read when the
// change feed says a server was written, rediscovered or removed.

import { api, query, tenantPath } from '../api.js';
import { Loaded, Pager, html, resourceIs, useChanges, useLoad, usePager, when } from '../ui.js';

/** @param {import('../ui.js').ViewProps} props */
export function McpView({ tenant, feed }) {
  const pager = usePager();
  const state = useLoad(
    (signal) => api.get(tenantPath(tenant, `/mcp${query({ cursor: pager.cursor })}`), { signal }),
    [tenant, pager.cursor],
  );
  useChanges(feed, state.reload, resourceIs('mcp_server'));
  const servers = state.data?.servers ?? [];
  return html`<h1>MCP servers</h1>
    <${Loaded} state=${state} empty=${servers.length === 0 && 'No MCP servers attached.'}>
      ${servers.map(
        (/** @type {any} */ s) =>
          html`<section class="card" aria-label=${`MCP server ${s.name}`}>
            <h2>${s.name} <span class="badge">${s.enabled ? 'enabled' : 'disabled'}</span></h2>
            <p class="muted">${s.transport?.type} · updated ${when(s.updated_at)}</p>
            ${s.last_error && html`<p class="bad">${s.last_error}</p>`}
            <ul class="tools">
              ${s.tools.map(
                (/** @type {any} */ t) =>
                  html`<li>
                    <strong class="mono">${t.name}</strong>
                    <span class="muted"
                      >${t.effect} · ${t.allowed ? 'allowed' : 'not allowed'}</span
                    >
                    <br />${t.description}
                  </li>`,
              )}
            </ul>
          </section>`,
      )}
    <//>
    <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="MCP servers" />`;
}
