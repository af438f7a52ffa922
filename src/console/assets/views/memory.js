// Memory: search a namespace; every hit shows its fused score and its rank in the
// lexical and in the semantic list (null = not in that list).

import { api, query, tenantPath } from '../api.js';
import { ErrorBox, html, useState } from '../ui.js';

/** @param {import('../ui.js').ViewProps} props */
export function MemoryView({ tenant }) {
  const [namespace, setNamespace] = useState('notes');
  const [q, setQ] = useState('');
  const [state, setState] = useState(
    /** @type {{status: 'idle' | 'loading' | 'ok' | 'error', results: any[], error: unknown}} */ ({
      status: 'idle',
      results: [],
      error: null,
    }),
  );
  async function search(/** @type {Event} */ event) {
    event.preventDefault();
    setState((old) => ({ ...old, status: 'loading' }));
    try {
      const body = await api.get(
        tenantPath(
          tenant,
          `/memory/${encodeURIComponent(namespace)}/search${query({ q, limit: 20 })}`,
        ),
      );
      setState({ status: 'ok', results: body.results, error: null });
    } catch (error) {
      setState({ status: 'error', results: [], error });
    }
  }
  const rank = (/** @type {number | null} */ r) => (r === null ? '—' : `#${r}`);
  return html`<h1>Memory</h1>
    <form class="filters" role="search" onSubmit=${search}>
      <label
        >Namespace
        <input
          name="namespace"
          required
          value=${namespace}
          onInput=${(/** @type {any} */ e) => setNamespace(e.currentTarget.value)}
      /></label>
      <label
        >Query
        <input
          name="q"
          type="search"
          required
          value=${q}
          onInput=${(/** @type {any} */ e) => setQ(e.currentTarget.value)}
      /></label>
      <button type="submit">Search</button>
    </form>
    ${state.status === 'loading' && html`<p class="muted" role="status">Searching…</p>`}
    ${state.status === 'error' && html`<${ErrorBox} error=${state.error} />`}
    ${state.status === 'idle' && html`<p class="empty">Search a namespace to see ranked facts.</p>`}
    ${state.status === 'ok' && state.results.length === 0 && html`<p class="empty">No facts match.</p>`}
    ${
      state.results.length > 0 &&
      html`<div class="table-wrap">
        <table data-testid="memory-results">
          <thead>
            <tr>
              <th scope="col">Fact</th>
              <th scope="col">Text</th>
              <th scope="col">Score</th>
              <th scope="col">Lexical rank</th>
              <th scope="col">Semantic rank</th>
            </tr>
          </thead>
          <tbody>
            ${state.results.map(
              (/** @type {any} */ r) =>
                html`<tr key=${r.id}>
                  <td class="mono">${r.id}</td>
                  <td>${r.text}</td>
                  <td>${r.score.toFixed(4)}</td>
                  <td>${rank(r.lexical_rank)}</td>
                  <td>${rank(r.semantic_rank)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`
    }`;
}
