// Shared pieces of every view: preact + htm, the load-state hook (loading, empty,
// error), the tenant change feed hook that makes lists live, and small formatters.

import { h, render } from './vendor/preact.mjs';
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from './vendor/hooks.mjs';
import htm from './vendor/htm.mjs';
import { ApiError } from './api.js';

export { duration, json } from './format.js';

export const html = htm.bind(h);

/**
 * The tenant's change feed (app.js): `type` is a `T/changes` event name or `resync`.
 * @typedef {{subscribe: (fn: (type: string, data: any) => void) => () => void}} ChangeFeed
 */
/** `#/runs/abc` → {path: 'runs', rest: ['abc']} @typedef {{path: string, rest: string[]}} Route */
/** What every view is given. @typedef {{tenant: string, feed: ChangeFeed, route: Route}} ViewProps */
/**
 * @template T
 * @typedef {{status: 'loading' | 'ok' | 'error', data: T | null, error: unknown, reload: () => void}} LoadState
 */
export { render, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState };

/**
 * Runs `load` now, whenever `deps` change and whenever `reload()` is called; the
 * previous data stays on screen during a reload (no layout jump).
 * @template T
 * @param {(signal: AbortSignal) => Promise<T>} load
 * @param {unknown[]} deps
 */
export function useLoad(load, deps) {
  const [state, setState] = useState(
    /** @type {{status: 'loading' | 'ok' | 'error', data: T | null, error: unknown}} */ ({
      status: 'loading',
      data: null,
      error: null,
    }),
  );
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    load(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ status: 'ok', data, error: null }),
      (error) =>
        !controller.signal.aborted && setState((old) => ({ ...old, status: 'error', error })),
    );
    return () => controller.abort();
  }, [...deps, tick]);
  useEffect(() => setState((old) => ({ ...old, status: 'loading', data: null })), deps);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/**
 * Calls `onChange` (at most once a second) when the tenant's change feed reports
 * something `accept` cares about.
 * @param {{subscribe: (fn: (type: string, data: any) => void) => () => void}} feed
 * @param {() => void} onChange
 * @param {(type: string, data: any) => boolean} [accept]
 */
export function useChanges(feed, onChange, accept = () => true) {
  const latest = useRef(onChange);
  latest.current = onChange;
  useEffect(() => {
    /** @type {ReturnType<typeof setTimeout> | null} */
    let timer = null;
    const unsubscribe = feed.subscribe((type, data) => {
      if (type !== 'resync' && !accept(type, data)) return;
      timer ??= setTimeout(() => {
        timer = null;
        latest.current();
      }, 1000);
    });
    return () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
    };
  }, [feed]);
}

/**
 * A `useChanges` filter: `resource.changed` about one of `resources` (agent, schedule,
 * delivery, mcp_server, wasm_tool).
 * @param {...string} resources
 * @returns {(type: string, data: any) => boolean}
 */
export function resourceIs(...resources) {
  return (type, data) => type === 'resource.changed' && resources.includes(data?.resource);
}

/**
 * Loading / error / empty around a view's content.
 * @param {{state: LoadState<any>, empty?: string | false | null | undefined, children?: any}} props
 */
export function Loaded({ state, empty, children }) {
  if (state.status === 'error' && state.data === null) {
    return html`<${ErrorBox} error=${state.error} retry=${state.reload} />`;
  }
  if (state.data === null) {
    return html`<p class="muted" role="status" aria-live="polite">Loading…</p>`;
  }
  return html`${
    state.status === 'error' && html`<${ErrorBox} error=${state.error} retry=${state.reload} />`
  }
  ${empty ? html`<p class="empty">${empty}</p>` : children}`;
}

/** @param {{error: unknown, retry?: (() => void) | null}} props */
export function ErrorBox({ error, retry }) {
  const code = error instanceof ApiError ? error.code : 'NETWORK';
  const message = error instanceof Error ? error.message : String(error);
  return html`<div class="error" role="alert">
    <strong>${code}</strong> ${message}
    ${retry && html` <button type="button" onClick=${retry}>Retry</button>`}
  </div>`;
}

/** @param {{status: string}} props */
export function StatusBadge({ status }) {
  return html`<span class=${`badge badge-${status}`}>${status}</span>`;
}

/** `2026-12-01T16:32:38.123Z` → `16:32:38` today, else `2026-12-01 16:32`. */
export function when(/** @type {string | null} */ iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString() : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/**
 * Keyset paging: the cursors of the pages behind this one, so Previous works too.
 * @returns {{cursor: string | undefined, page: number, next: (c: string) => void, previous: () => void, reset: () => void}}
 */
export function usePager() {
  const [stack, setStack] = useState(/** @type {string[]} */ ([]));
  return {
    cursor: stack[stack.length - 1],
    page: stack.length + 1,
    next: (cursor) => setStack((old) => [...old, cursor]),
    previous: () => setStack((old) => old.slice(0, -1)),
    reset: () => setStack([]),
  };
}

/**
 * @param {{pager: ReturnType<typeof usePager>, nextCursor: string | null | undefined, label: string}} props
 */
export function Pager({ pager, nextCursor, label }) {
  return html`<nav class="pager" aria-label=${`${label} pages`}>
    <button type="button" disabled=${pager.page === 1} onClick=${pager.previous}>← Previous</button>
    <span aria-live="polite">Page ${pager.page}</span>
    <button
      type="button"
      disabled=${!nextCursor}
      onClick=${() => nextCursor && pager.next(nextCursor)}
    >
      Next →
    </button>
  </nav>`;
}
