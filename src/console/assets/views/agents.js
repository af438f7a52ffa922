// Agents: the definitions, each editable as JSON. The server validates (PUT T/agents/:a);
// its message — which names the field — is shown inline under the editor. Also the
// tools the agent's model is sent (GET T/tools?agent=). Live: the list re-reads when the
// change feed reports an agent written or removed (by anyone), the tools when an MCP
// server or WebAssembly tool changed; an open editor takes the new definition only
// while it holds no unsaved edit.

import { ApiError, api, query, tenantPath } from '../api.js';
import {
  Loaded,
  Pager,
  html,
  resourceIs,
  useChanges,
  useEffect,
  useLoad,
  usePager,
  useState,
  when,
} from '../ui.js';

const READ_ONLY = ['tenant', 'name', 'created_at', 'updated_at'];

function definitionOf(/** @type {any} */ agent) {
  const copy = { ...agent };
  for (const key of READ_ONLY) delete copy[key];
  return JSON.stringify(copy, null, 2);
}

/**
 * @param {{tenant: string, agent: any, onSaved: () => void, feed: import('../ui.js').ChangeFeed}} props
 */
function Editor({ tenant, agent, onSaved, feed }) {
  const stored = definitionOf(agent);
  const [text, setText] = useState(stored);
  const [base, setBase] = useState(stored);
  // Someone else saved: follow the server unless this editor holds an unsaved edit.
  useEffect(() => {
    if (stored === base) return;
    if (text === base) setText(stored);
    setBase(stored);
  }, [stored]);
  const [problem, setProblem] = useState(/** @type {string | null} */ (null));
  const [saved, setSaved] = useState(false);
  const tools = useLoad(
    (signal) => api.get(tenantPath(tenant, `/tools?agent=${agent.name}`), { signal }),
    [tenant, agent.name],
  );
  useChanges(feed, tools.reload, resourceIs('mcp_server', 'wasm_tool'));
  async function save(/** @type {Event} */ event) {
    event.preventDefault();
    setSaved(false);
    let body;
    try {
      body = JSON.parse(text);
    } catch (error) {
      setProblem(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    try {
      await api.put(tenantPath(tenant, `/agents/${agent.name}`), body);
      setProblem(null);
      setSaved(true);
      onSaved();
    } catch (error) {
      setProblem(error instanceof ApiError ? `${error.code}: ${error.message}` : String(error));
    }
  }
  const id = `agent-${agent.name}`;
  return html`<section class="card" aria-labelledby=${`${id}-title`}>
    <h2 id=${`${id}-title`}>${agent.name}</h2>
    <p class="muted">updated ${when(agent.updated_at)}</p>
    <form onSubmit=${save}>
      <label for=${id}>Definition (JSON)</label>
      <textarea
        id=${id}
        class="mono"
        rows="12"
        spellcheck="false"
        aria-invalid=${problem ? 'true' : 'false'}
        aria-describedby=${problem ? `${id}-error` : undefined}
        value=${text}
        onInput=${(/** @type {any} */ e) => setText(e.currentTarget.value)}
      ></textarea>
      ${
        problem &&
        html`<p class="field-error" id=${`${id}-error`} role="alert" data-testid="agent-error">
          ${problem}
        </p>`
      }
      <button type="submit">Save</button>
      ${saved && html`<span role="status" class="ok"> Saved.</span>`}
    </form>
    <h3>Tools this agent can see</h3>
    <${Loaded}
      state=${tools}
      empty=${tools.data?.tools.length === 0 && 'This agent sees no tools.'}
    >
      <ul class="tools" data-testid="agent-tools">
        ${(tools.data?.tools ?? []).map(
          (/** @type {any} */ t) =>
            html`<li>
              <strong class="mono">${t.name}</strong>
              <span class="muted">${t.family} · ${t.effect}</span> <br />${t.description}
            </li>`,
        )}
      </ul>
    <//>
  </section>`;
}

/** @param {import('../ui.js').ViewProps} props */
export function AgentsView({ tenant, feed }) {
  const pager = usePager();
  const state = useLoad(
    (signal) =>
      api.get(tenantPath(tenant, `/agents${query({ limit: 100, cursor: pager.cursor })}`), {
        signal,
      }),
    [tenant, pager.cursor],
  );
  useChanges(feed, state.reload, resourceIs('agent'));
  const [open, setOpen] = useState(/** @type {string | null} */ (null));
  const agents = state.data?.agents ?? [];
  const chosen = agents.find((/** @type {any} */ a) => a.name === open);
  return html`<h1>Agents</h1>
    <${Loaded} state=${state} empty=${agents.length === 0 && 'No agents yet (PUT T/agents/:name).'}>
      <ul class="chips">
        ${agents.map(
          (/** @type {any} */ a) =>
            html`<li>
              <button
                type="button"
                aria-pressed=${open === a.name ? 'true' : 'false'}
                onClick=${() => setOpen(a.name)}
              >
                ${a.name} <span class="muted">${a.model}</span>
              </button>
            </li>`,
        )}
      </ul>
    <//>
    <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="Agents" />
    ${
      chosen &&
      html`<${Editor}
        key=${chosen.name}
        tenant=${tenant}
        agent=${chosen}
        feed=${feed}
        onSaved=${state.reload}
      />`
    }`;
}
