// The console's frame: sign-in (token kept in sessionStorage only), the tenant the
// views show, the navigation and a hash router (`#/runs/<id>`), and one change feed
// per tenant that every list view listens to.

import { ApiError, api, follow, session, tenantPath } from './api.js';
import { ErrorBox, html, render, useEffect, useMemo, useRef, useState } from './ui.js';
import { OverviewView } from './views/overview.js';
import { RunsView } from './views/runs.js';
import { RunView } from './views/run.js';
import { ApprovalsView } from './views/approvals.js';
import { ThreadsView } from './views/threads.js';
import { AgentsView } from './views/agents.js';
import { SchedulesView } from './views/schedules.js';
import { DeliveriesView } from './views/deliveries.js';
import { MemoryView } from './views/memory.js';
import { ArtifactsView } from './views/artifacts.js';
import { McpView } from './views/mcp.js';
import { WasmView } from './views/wasm.js';

const VIEWS = [
  { path: 'overview', title: 'Overview', view: OverviewView },
  { path: 'runs', title: 'Runs', view: RunsView },
  { path: 'approvals', title: 'Approvals', view: ApprovalsView },
  { path: 'threads', title: 'Threads', view: ThreadsView },
  { path: 'agents', title: 'Agents', view: AgentsView },
  { path: 'schedules', title: 'Schedules', view: SchedulesView },
  { path: 'deliveries', title: 'Deliveries', view: DeliveriesView },
  { path: 'memory', title: 'Memory', view: MemoryView },
  { path: 'artifacts', title: 'Artifacts', view: ArtifactsView },
  { path: 'mcp', title: 'MCP servers', view: McpView },
  { path: 'wasm', title: 'WebAssembly tools', view: WasmView },
];

/** `#/runs/abc?x=1` → {path: 'runs', rest: ['abc']} */
function parseHash() {
  const [path = 'overview', ...rest] = location.hash
    .replace(/^#\/?/, '')
    .split('?')[0]
    .split('/')
    .map(decodeURIComponent);
  return { path: path || 'overview', rest };
}

/** The tenant's change feed (GET T/changes), shared by every view of the page. */
function changeFeed(/** @type {string} */ tenant) {
  /** @type {Set<(type: string, data: any) => void>} */
  const listeners = new Set();
  const stop = follow(tenantPath(tenant, '/changes'), {
    onEvent: (type, data) => listeners.forEach((listener) => listener(type, data)),
    // After a reconnect something may have been missed: every view re-reads.
    onState: (state) => state === 'live' && listeners.forEach((listener) => listener('resync', {})),
  });
  return {
    subscribe(/** @type {(type: string, data: any) => void} */ listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop,
  };
}

/** @param {{onSignedIn: (who: any) => void, problem: unknown}} props */
function SignIn({ onSignedIn, problem }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(problem);
  const [busy, setBusy] = useState(false);
  async function submit(/** @type {Event} */ event) {
    event.preventDefault();
    setBusy(true);
    session.setToken(token.trim());
    try {
      onSignedIn(await api.get('/v1/whoami'));
    } catch (caught) {
      session.setToken(null);
      setError(caught);
    } finally {
      setBusy(false);
    }
  }
  return html`<main class="signin" id="main">
    <h1>keel console</h1>
    <form onSubmit=${submit}>
      <label for="token">Admin or tenant token</label>
      <input
        id="token"
        name="token"
        type="password"
        autocomplete="off"
        required
        value=${token}
        onInput=${(/** @type {any} */ e) => setToken(e.currentTarget.value)}
      />
      <p class="muted">Kept in this tab's session storage only; closing the tab forgets it.</p>
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    ${error && html`<${ErrorBox} error=${error} />`}
  </main>`;
}

/** @param {{tenant: string | null, onPick: (name: string) => void}} props */
function TenantPicker({ tenant, onPick }) {
  const [tenants, setTenants] = useState(/** @type {string[] | null} */ (null));
  useEffect(() => {
    api.get('/v1/tenants').then(
      (body) => setTenants(body.tenants.map((/** @type {any} */ t) => t.name)),
      () => setTenants([]),
    );
  }, []);
  return html`<label class="tenant-picker"
    >Tenant
    <select
      value=${tenant ?? ''}
      onChange=${(/** @type {any} */ e) => onPick(e.currentTarget.value)}
    >
      <option value="" disabled>choose…</option>
      ${(tenants ?? []).map((name) => html`<option value=${name}>${name}</option>`)}
    </select></label
  >`;
}

/** @param {{who: {kind: 'admin' | 'tenant', tenant: string | null}, signOut: () => void}} props */
function Shell({ who, signOut }) {
  const [route, setRoute] = useState(parseHash);
  const [tenant, setTenant] = useState(who.tenant ?? session.tenant());
  useEffect(() => {
    const onHash = () => setRoute(parseHash());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const feed = useMemo(() => (tenant ? changeFeed(tenant) : null), [tenant]);
  useEffect(() => () => feed?.stop(), [feed]);
  const main = useRef(/** @type {HTMLElement | null} */ (null));
  // Keyboard and screen-reader users land on the new view, not on the old link. Not on
  // the first render: a fresh page starts at its top, where Tab reaches the skip link.
  const firstView = useRef(true);
  useEffect(() => {
    if (firstView.current) firstView.current = false;
    else main.current?.focus({ preventScroll: true });
  }, [route.path]);

  const entry = VIEWS.find((view) => view.path === route.path) ?? VIEWS[0];
  const View = route.path === 'runs' && route.rest[0] ? RunView : entry.view;
  useEffect(() => {
    document.title = `${entry.title} · keel`;
  }, [entry]);
  const pick = (/** @type {string} */ name) => {
    session.setTenant(name);
    setTenant(name);
  };
  return html`<a
      class="skip"
      href="#main"
      onClick=${(/** @type {Event} */ e) => {
        e.preventDefault();
        main.current?.focus();
      }}
      >Skip to content</a
    >
    <header class="top">
      <span class="brand">keel</span>
      ${
        who.kind === 'admin'
          ? html`<${TenantPicker} tenant=${tenant} onPick=${pick} />`
          : html`<span class="tenant" data-testid="tenant">tenant ${tenant}</span>`
      }
      <button type="button" class="link" onClick=${signOut}>Sign out</button>
    </header>
    <nav class="side" aria-label="Views">
      <ul>
        ${VIEWS.map(
          (view) =>
            html`<li>
              <a href=${`#/${view.path}`} aria-current=${view === entry ? 'page' : undefined}
                >${view.title}</a
              >
            </li>`,
        )}
      </ul>
    </nav>
    <main id="main" tabindex="-1" ref=${main}>
      ${
        tenant && feed
          ? html`<${View}
              key=${`${tenant}/${route.path}`}
              tenant=${tenant}
              feed=${feed}
              route=${route}
            />`
          : html`<h1>Choose a tenant</h1>
              <p class="empty">The admin token sees every tenant; pick one above.</p>`
      }
    </main>`;
}

function App() {
  const [who, setWho] = useState(/** @type {any} */ (null));
  const [problem, setProblem] = useState(/** @type {unknown} */ (null));
  const [checking, setChecking] = useState(true);
  useEffect(() => {
    // Tokenless loopback mode answers without a token; otherwise a stored one is tried.
    api.get('/v1/whoami').then(
      (body) => {
        setWho(body);
        setChecking(false);
      },
      (error) => {
        if (!(error instanceof ApiError && error.status === 401)) setProblem(error);
        session.setToken(null);
        setChecking(false);
      },
    );
  }, []);
  if (checking) return html`<p class="muted" role="status">Connecting…</p>`;
  if (!who) return html`<${SignIn} onSignedIn=${setWho} problem=${problem} />`;
  const signOut = () => {
    session.setToken(null);
    session.setTenant(null);
    setWho(null);
  };
  return html`<${Shell} who=${who} signOut=${signOut} />`;
}

render(html`<${App} />`, document.getElementById('app') ?? document.body);
