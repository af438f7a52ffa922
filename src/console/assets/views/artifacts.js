// Artifacts: browse by path prefix with keyset paging; download fetches the bytes with
// the token and hands the browser a blob (a plain link could not carry the header).

import { api, query, tenantPath } from '../api.js';
import { ErrorBox, Loaded, Pager, html, useLoad, usePager, useState, when } from '../ui.js';

function encodePath(/** @type {string} */ path) {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** @param {import('../ui.js').ViewProps} props */
export function ArtifactsView({ tenant }) {
  const [prefix, setPrefix] = useState('');
  const pager = usePager();
  const state = useLoad(
    (signal) =>
      api.get(
        tenantPath(tenant, `/artifacts${query({ prefix, limit: 50, cursor: pager.cursor })}`),
        {
          signal,
        },
      ),
    [tenant, prefix, pager.cursor],
  );
  const [problem, setProblem] = useState(/** @type {unknown} */ (null));
  const items = state.data?.items ?? [];

  async function download(/** @type {any} */ artifact) {
    try {
      const blob = await api.blob(tenantPath(tenant, `/artifacts/${encodePath(artifact.path)}`));
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = artifact.path.split('/').pop() ?? 'artifact';
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (error) {
      setProblem(error);
    }
  }

  return html`<h1>Artifacts</h1>
    <div class="filters">
      <label
        >Path prefix
        <input
          name="prefix"
          value=${prefix}
          onChange=${(/** @type {any} */ e) => {
            pager.reset();
            setPrefix(e.currentTarget.value);
          }}
      /></label>
    </div>
    ${problem && html`<${ErrorBox} error=${problem} />`}
    <${Loaded} state=${state} empty=${items.length === 0 && 'No artifacts.'}>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Type</th>
              <th scope="col">Size</th>
              <th scope="col">Updated</th>
              <th scope="col">Download</th>
            </tr>
          </thead>
          <tbody>
            ${items.map(
              (/** @type {any} */ a) =>
                html`<tr key=${a.path}>
                  <td class="mono">${a.path}</td>
                  <td>${a.content_type}</td>
                  <td>${a.size_bytes} B</td>
                  <td>${when(a.updated_at)}</td>
                  <td>
                    <button
                      type="button"
                      onClick=${() => download(a)}
                      aria-label=${`Download ${a.path}`}
                    >
                      Download
                    </button>
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    <//>
    <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="Artifacts" />`;
}
