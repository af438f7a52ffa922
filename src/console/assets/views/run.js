// One run, live: what it was asked (its input), its trace as a timeline (model requests
// and responses, the text streaming in as `model.delta` chunks, each tool call with
// arguments, effect, duration and result, approvals, resumes, notes, errors), a cancel
// button, and — while it waits for a person — the call with Approve and Deny. Events
// arriving in a burst (a replay of 1,000) are applied once per animation frame.

import { api, follow, query, tenantPath } from '../api.js';
import {
  ErrorBox,
  Loaded,
  StatusBadge,
  duration,
  html,
  json,
  useEffect,
  useLoad,
  useMemo,
  useRef,
  useState,
  when,
} from '../ui.js';
import { ApprovalCard } from './approvals.js';
import { eventSummary } from './event-summary.js';

/** @typedef {import('../../../events.ts').TraceEvent} TraceEvent */
/** @typedef {import('../../../events.ts').StreamEvent} StreamEvent */
/** @typedef {Extract<TraceEvent, {type: 'tool.call'}>} ToolCallEvent */
/** @typedef {Extract<TraceEvent, {type: 'tool.result'}>} ToolResultEvent */
/**
 * A row of the timeline: a tool call with its result (either may be missing from the
 * page), or any other event.
 * @typedef {{kind: 'tool', key: number, call: ToolCallEvent | null, result: ToolResultEvent | null}
 *   | {kind: 'event', key: number, event: TraceEvent}} TimelineItem
 */

const TERMINAL = new Set(['run.succeeded', 'run.failed', 'run.cancelled']);
/** Events after which the run's status is read again (the head and the approval card). */
const STATUS_CHANGES = new Set([
  ...TERMINAL,
  'run.claimed',
  'approval.requested',
  'approval.decided',
]);

/** A run's input as a person reads it: its `text`, else the input as JSON. */
function inputText(/** @type {any} */ input) {
  return typeof input?.text === 'string' ? input.text : json(input);
}
const TRACE_PAGE = 1000;

/** Arguments of every tool call by call_id, from the run's assistant entries. */
function argumentsByCall(/** @type {any[]} */ entries) {
  /** @type {Map<string, string>} */
  const args = new Map();
  for (const entry of entries) {
    if (entry.kind !== 'assistant') continue;
    for (const call of entry.body.tool_calls) args.set(call.call_id, call.arguments);
  }
  return args;
}

/** Folds the flat trace into timeline items: a tool call and its result are one item. */
function timeline(/** @type {TraceEvent[]} */ events) {
  /** @type {TimelineItem[]} */
  const items = [];
  /** @type {Map<string, TimelineItem & {kind: 'tool'}>} */
  const calls = new Map();
  for (const event of events) {
    if (event.type === 'tool.call') {
      /** @type {TimelineItem & {kind: 'tool'}} */
      const item = { kind: 'tool', key: event.seq, call: event, result: null };
      calls.set(event.data.call_id, item);
      items.push(item);
    } else if (event.type === 'tool.result') {
      const item = calls.get(event.data.call_id);
      if (item) item.result = event;
      else items.push({ kind: 'tool', key: event.seq, call: null, result: event });
    } else items.push({ kind: 'event', key: event.seq, event });
  }
  return items;
}

/** @param {{item: TimelineItem & {kind: 'tool'}, args: Map<string, string>}} props */
function ToolItem({ item, args }) {
  const call = item.call?.data;
  const result = item.result?.data;
  const name = call?.name ?? result?.name;
  const callId = call?.call_id ?? result?.call_id;
  const outcome = !result ? 'running' : result.ok ? 'ok' : 'error';
  const recorded = callId === undefined ? undefined : args.get(callId);
  return html`<li class=${`item tool tool-${outcome}`} data-testid="tool-call">
    <div class="item-head">
      <span class="seq">${item.key}</span>
      <strong>tool ${name}</strong>
      <span class=${`badge badge-${outcome}`}>${outcome}</span>
      ${call?.effect && html`<span class="muted">effect ${call.effect}</span>`}
      ${result && html`<span class="muted">${duration(result.duration_ms)}</span>`}
      ${call && call.attempt > 1 && html`<span class="muted">attempt ${call.attempt}</span>`}
    </div>
    <details>
      <summary>arguments and result <span class="mono muted">${callId}</span></summary>
      <pre class="mono" data-testid="tool-args">${recorded ?? '(not recorded yet)'}</pre>
      ${
        result &&
        html`<pre class="mono">${result.ok ? json(result.result) : json(result.error)}</pre>`
      }
    </details>
  </li>`;
}

/** @param {{event: TraceEvent, streamed: string | undefined}} props */
function EventItem({ event, streamed }) {
  const tone = event.type === 'run.failed' || event.type === 'model.retry' ? 'bad' : '';
  return html`<li class=${`item ${tone}`}>
    <div class="item-head">
      <span class="seq">${event.seq}</span>
      <strong>${event.type}</strong>
      <span class="muted">${eventSummary(event)}</span>
    </div>
    ${
      event.type === 'model.response' &&
      streamed !== undefined &&
      html`<pre class="streamed">${streamed}</pre>`
    }
    ${
      event.type === 'run.succeeded' &&
      html`<pre class="output" data-testid="run-output">
${typeof event.data.output.reply === 'string' ? event.data.output.reply : json(event.data.output)}</pre>`
    }
  </li>`;
}

/**
 * Every entry of the run: the route answers a page at a time (`next_after`).
 * @param {string} base
 * @param {AbortSignal} signal
 */
async function allEntries(base, signal) {
  /** @type {any[]} */
  const entries = [];
  let after = 0;
  for (;;) {
    const page = await api.get(`${base}/entries${query({ after })}`, { signal });
    entries.push(...page.entries);
    if (page.next_after === null || page.next_after === undefined) return { entries };
    after = page.next_after;
  }
}

/** @param {import('../ui.js').ViewProps} props */
export function RunView({ tenant, route }) {
  const id = route.rest[0];
  const base = tenantPath(tenant, `/runs/${encodeURIComponent(id)}`);
  const run = useLoad((signal) => api.get(base, { signal }), [base]);
  const entries = useLoad((signal) => allEntries(base, signal), [base]);
  const [events, setEvents] = useState(/** @type {TraceEvent[]} */ ([]));
  const [streams, setStreams] = useState(/** @type {Record<number, string>} */ ({}));
  const [live, setLive] = useState('connecting');
  const [problem, setProblem] = useState(/** @type {unknown} */ (null));
  const [cancelling, setCancelling] = useState(false);
  const [renderMs, setRenderMs] = useState(/** @type {number | null} */ (null));
  // Render budget figures for the e2e test: the stored trace's fetch, then from its
  // arrival to the first paint of the whole timeline.
  const timing = useRef({ fetchMs: 0, dataAt: 0 });
  const deltas = useRef(0);

  useEffect(() => {
    /** @type {TraceEvent[]} */
    let pending = [];
    /** @type {Record<number, string>} */
    let pendingText = {};
    // Steps whose pending text is the call's whole text (`whole` delta): it replaces.
    /** @type {Set<number>} */
    let pendingWhole = new Set();
    let frame = 0;
    let refetch = false;
    const flush = () => {
      frame = 0;
      const batch = pending;
      const text = pendingText;
      const whole = pendingWhole;
      pending = [];
      pendingText = {};
      pendingWhole = new Set();
      if (batch.length > 0) setEvents((old) => [...old, ...batch]);
      if (Object.keys(text).length > 0) {
        setStreams((old) => {
          const next = { ...old };
          for (const [step, chunk] of Object.entries(text)) {
            next[Number(step)] =
              (whole.has(Number(step)) ? '' : (next[Number(step)] ?? '')) + chunk;
          }
          return next;
        });
      }
      if (refetch) {
        refetch = false;
        entries.reload();
        if (batch.some((event) => STATUS_CHANGES.has(event.type))) {
          run.reload();
        }
      }
    };
    const schedule = () => (frame ||= requestAnimationFrame(flush));
    // Every event arrives here, stored ones from the trace page, then the stream's; the
    // SSE event name is the event's type.
    const onEvent = (/** @type {string} */ _type, /** @type {StreamEvent} */ event) => {
      if (event.type === 'model.delta') {
        deltas.current += 1;
        const step = event.data.step;
        if (event.data.whole) {
          pendingWhole.add(step);
          pendingText[step] = event.data.text;
        } else pendingText[step] = (pendingText[step] ?? '') + event.data.text;
      } else {
        pending.push(event);
        if (event.type !== 'model.request') refetch = true;
      }
      schedule();
    };
    let stop = () => {};
    let closed = false;
    // What is stored comes as one JSON read (one render, however long the trace);
    // the stream then follows from the last seq read.
    (async () => {
      let after = 0;
      let over = false;
      const fetching = performance.now();
      for (;;) {
        const page = await api.get(`${base}/trace?after=${after}&limit=${TRACE_PAGE}`);
        if (closed) return;
        for (const event of page.events) {
          onEvent(event.type, event);
          over ||= TERMINAL.has(event.type);
        }
        if (page.events.length > 0) after = page.events[page.events.length - 1].seq;
        if (page.events.length < TRACE_PAGE) break;
      }
      timing.current.fetchMs = performance.now() - fetching;
      timing.current.dataAt = performance.now();
      if (over) return setLive('ended');
      stop = follow(`${base}/events`, {
        lastEventId: after > 0 ? String(after) : undefined,
        isLast: (type) => TERMINAL.has(type),
        onEvent,
        onState(state, error) {
          setLive(state);
          if (error) setProblem(error);
        },
      });
    })().catch((error) => {
      setLive('error');
      setProblem(error);
    });
    return () => {
      closed = true;
      stop();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [base]);

  const finished = events.some((event) => TERMINAL.has(event.type));
  useEffect(() => {
    if (!finished || renderMs !== null) return;
    // The frame after this commit has been painted: the timeline is on screen.
    requestAnimationFrame(() =>
      setTimeout(() => setRenderMs(Math.round(performance.now() - timing.current.dataAt))),
    );
  }, [finished]);

  const items = useMemo(() => timeline(events), [events]);
  const args = useMemo(() => argumentsByCall(entries.data?.entries ?? []), [entries.data]);
  const current = run.data?.run;
  const terminal = current && ['succeeded', 'failed', 'cancelled'].includes(current.status);
  const waiting = current?.status === 'waiting';
  const approvals = useLoad(
    (signal) =>
      waiting ? api.get(`${base}/approvals`, { signal }) : Promise.resolve({ approvals: [] }),
    [base, waiting],
  );
  const pending = (approvals.data?.approvals ?? []).filter(
    (/** @type {any} */ a) => a.status === 'pending',
  );
  // The text of a step still being generated, shown below the timeline.
  const lastStep = Object.keys(streams)
    .map(Number)
    .sort((a, b) => b - a)[0];
  const openText =
    lastStep !== undefined &&
    !events.some((e) => e.type === 'model.response' && e.data.step === lastStep)
      ? streams[lastStep]
      : null;

  async function cancel() {
    setCancelling(true);
    try {
      await api.post(`${base}/cancel`, { reason: 'cancelled from the console' });
      run.reload();
    } catch (error) {
      setProblem(error);
    } finally {
      setCancelling(false);
    }
  }

  return html`<h1>Run <span class="mono">${id}</span></h1>
    <p><a href="#/runs">← all runs</a></p>
    <${Loaded} state=${run}>
      ${
        current &&
        html`<section class="card run-head" aria-label="Run">
          <dl class="facts">
            <div>
              <dt>Status</dt>
              <dd data-testid="run-status"><${StatusBadge} status=${current.status} /></dd>
            </div>
            <div>
              <dt>Agent</dt>
              <dd>${current.agent}</dd>
            </div>
            <div>
              <dt>Scope</dt>
              <dd class="mono">${current.scope}</dd>
            </div>
            <div>
              <dt>Source</dt>
              <dd>${current.source}</dd>
            </div>
            <div>
              <dt>Steps</dt>
              <dd>${current.steps}</dd>
            </div>
            <div>
              <dt>Attempt</dt>
              <dd>${current.attempt}</dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>${when(current.created_at)}</dd>
            </div>
            <div>
              <dt>Finished</dt>
              <dd>${when(current.finished_at)}</dd>
            </div>
          </dl>
          <button type="button" class="danger" disabled=${terminal || cancelling} onClick=${cancel}>
            Cancel run
          </button>
          ${current.error && html`<p class="bad">${current.error.code}: ${current.error.message}</p>`}
          <h2>Input</h2>
          <pre class="output" data-testid="run-input">${inputText(current.input)}</pre>
        </section>`
      }
    <//>
    ${pending.map(
      (/** @type {any} */ a) =>
        html`<${ApprovalCard}
          key=${a.call_id}
          tenant=${tenant}
          approval=${a}
          onDecided=${() => run.reload()}
        />`,
    )}
    ${problem && html`<${ErrorBox} error=${problem} />`}
    <h2>Timeline <span class="muted live-state" data-testid="live-state">${live}</span></h2>
    <ol
      class="timeline"
      data-testid="timeline"
      data-events=${events.length}
      data-deltas=${deltas.current}
      data-render-ms=${renderMs ?? ''}
      data-fetch-ms=${renderMs === null ? '' : Math.round(timing.current.fetchMs)}
    >
      ${items.map((item) =>
        item.kind === 'tool'
          ? html`<${ToolItem} key=${item.key} item=${item} args=${args} />`
          : html`<${EventItem}
              key=${item.key}
              event=${item.event}
              streamed=${item.event.type === 'model.response' ? streams[item.event.data.step] : undefined}
            />`,
      )}
    </ol>
    ${events.length === 0 && live !== 'error' && html`<p class="muted" role="status">Waiting for events…</p>`}
    ${
      openText !== null &&
      html`<pre class="streamed live" aria-live="polite" data-testid="streaming">${openText}</pre>`
    }`;
}
