// WebAssembly tools: each module the tenant registered, the tool name the model sees,
// its effect and hard limits (deadline, memory, output) and the module's size and hash;
// re-read when the change feed says a tool was written or removed.

import { api, query, tenantPath } from '../api.js';
import { Loaded, Pager, html, resourceIs, useChanges, useLoad, usePager, when } from '../ui.js';

/** @param {number} bytes */
const size = (bytes) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;

/** @param {import('../ui.js').ViewProps} props */
export function WasmView({ tenant, feed }) {
  const pager = usePager();
  const state = useLoad(
    (signal) =>
      api.get(tenantPath(tenant, `/wasm-tools${query({ cursor: pager.cursor })}`), { signal }),
    [tenant, pager.cursor],
  );
  useChanges(feed, state.reload, resourceIs('wasm_tool'));
  const tools = state.data?.tools ?? [];
  return html`<h1>WebAssembly tools</h1>
    <${Loaded} state=${state} empty=${tools.length === 0 && 'No WebAssembly tools registered.'}>
      ${tools.map(
        (/** @type {any} */ t) =>
          html`<section class="card" aria-label=${`WebAssembly tool ${t.name}`}>
            <h2><span class="mono">${t.tool}</span> <span class="badge">${t.effect}</span></h2>
            <p>${t.description}</p>
            <p class="muted">
              ${`deadline ${t.timeout_ms} ms · memory ${t.memory_limit_mb} MB · output ${size(t.max_output_bytes)} · module ${size(t.module_bytes)} `}
              <span class="mono">${String(t.sha256).slice(0, 12)}</span>
              ${` · updated ${when(t.updated_at)}`}
            </p>
          </section>`,
      )}
    <//>
    <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="WebAssembly tools" />`;
}
