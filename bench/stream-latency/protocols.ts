// Each contender's streaming request for one run of the stream-latency bench (load.ts):
// keel's submit with `follow` then the run's event stream (SSE), the LangGraph.js API
// server's `runs/stream` on a thread (stream mode `messages-tuple`: the model's tokens),
// Mastra's `agents/:id/stream` on a memory thread, and — the reference — the fixture
// model itself streamed directly (`direct`). Every one sends the same user text to the same
// fixture-model server and reads the response body as it arrives: the first token is
// the moment the answer's first characters (FIRST_MARKER) arrive, the final answer the
// moment the response ends (having carried the answer's last word, LAST_MARKER).

import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { call } from '../turns/protocols.ts';

export type StreamKind = 'direct' | 'keel' | 'langgraph' | 'mastra';

export interface StreamSpec {
  kind: StreamKind;
  /** The contender's URL (for `direct`, the fixture-model server's). */
  url: string;
  /** Runs started at once in each burst. */
  runs: number;
  /** Runs before the measured bursts (lazy loads, JIT), `warmupInflight` at a time. */
  warmup: number;
  warmupInflight: number;
  /** The most bursts the runner may ask for (threads are made before the first). */
  bursts: number;
  text: string;
}

/** The answer's first characters ("echo: …", the fixture's reply), as any wire encodes them. */
export const FIRST_MARKER = 'echo:';
/** The answer's last word (the user text ends with it). */
export const LAST_MARKER = 'omega';

export interface StreamTiming {
  /** From sending the first request to the answer's first characters, ms. */
  firstMs: number;
  /** From sending the first request to the end of the response, ms. */
  finalMs: number;
}

/** Which conversation a run has: warm-up runs first, then each burst's own. */
export interface RunSlot {
  /** 0-based over the warm-up runs and then over every burst's runs. */
  index: number;
  name: string;
}

interface StreamProtocol {
  /** Setup before the load (threads); its result is handed to every run. */
  prepare(spec: StreamSpec, dispatcher: Dispatcher): Promise<string[]>;
  run(
    spec: StreamSpec,
    dispatcher: Dispatcher,
    state: string[],
    slot: RunSlot,
    started: number,
  ): Promise<StreamTiming>;
}

/**
 * Reads a streamed response to its end, noting when FIRST_MARKER arrives (searched across
 * chunk boundaries); `mustSee` are texts the whole response must have held (checked
 * on a window, so each must be shorter than WINDOW).
 */
async function readStream(
  method: 'GET' | 'POST',
  url: string,
  dispatcher: Dispatcher,
  started: number,
  body: unknown,
  mustSee: string[],
): Promise<StreamTiming> {
  const response = await request(url, {
    method,
    dispatcher,
    headers: {
      accept: 'text/event-stream',
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (response.statusCode >= 300) {
    const text = await response.body.text();
    throw new Error(`${method} ${url} → ${response.statusCode}: ${text.slice(0, 500)}`);
  }
  let firstMs = NaN;
  let tail = '';
  const unseen = new Set([FIRST_MARKER, LAST_MARKER, ...mustSee]);
  for await (const chunk of response.body) {
    const window = tail + (chunk as Buffer).toString('utf8');
    if (Number.isNaN(firstMs) && window.includes(FIRST_MARKER))
      firstMs = performance.now() - started;
    for (const text of unseen) if (window.includes(text)) unseen.delete(text);
    tail = window.slice(-WINDOW);
  }
  const finalMs = performance.now() - started;
  if (unseen.size > 0)
    throw new Error(`${url}: the stream ended without ${[...unseen].join(', ')}${tail}`);
  return { firstMs, finalMs };
}

const WINDOW = 64;

const direct: StreamProtocol = {
  prepare: async () => [],
  run: (spec, dispatcher, _state, _slot, started) =>
    readStream(
      'POST',
      `${spec.url}/v1/chat/completions`,
      dispatcher,
      started,
      {
        model: 'fixture',
        messages: [{ role: 'user', content: spec.text }],
        stream: true,
        stream_options: { include_usage: true },
      },
      ['[DONE]'],
    ),
};

const keel: StreamProtocol = {
  prepare: async () => [],
  async run(spec, dispatcher, _state, slot, started) {
    const base = `${spec.url}/v1/tenants/bench`;
    // `follow`: the run counts as watched until this client's stream opens, so the
    // default provider (stream = "when-watched") streams its first model call.
    const submitted = await call(dispatcher, 'POST', `${base}/turns`, {
      agent: 'agent',
      scope: slot.name,
      payload: { text: spec.text },
      follow: true,
    });
    return readStream(
      'GET',
      `${base}/runs/${String(submitted.run_id)}/events`,
      dispatcher,
      started,
      undefined,
      ['event: run.succeeded'],
    );
  },
};

const langgraph: StreamProtocol = {
  async prepare(spec, dispatcher) {
    const threads: string[] = [];
    for (let i = 0; i < spec.warmup + spec.bursts * spec.runs; i++) {
      const thread = await call(dispatcher, 'POST', `${spec.url}/threads`, {});
      threads.push(String(thread.thread_id));
    }
    return threads;
  },
  run: (spec, dispatcher, threads, slot, started) =>
    readStream(
      'POST',
      `${spec.url}/threads/${threads[slot.index]}/runs/stream`,
      dispatcher,
      started,
      {
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: spec.text }] },
        stream_mode: ['messages-tuple'],
      },
      [],
    ),
};

const mastra: StreamProtocol = {
  prepare: async () => [],
  run: (spec, dispatcher, _state, slot, started) =>
    readStream(
      'POST',
      `${spec.url}/api/agents/agent/stream`,
      dispatcher,
      started,
      {
        messages: [{ role: 'user', content: spec.text }],
        threadId: slot.name,
        resourceId: 'bench',
      },
      ['[DONE]'],
    ),
};

export const STREAM_PROTOCOLS: Record<StreamKind, StreamProtocol> = {
  direct,
  keel,
  langgraph,
  mastra,
};
