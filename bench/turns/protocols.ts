// Each contender's request shape for one turn of the turn benchmark (load.ts): keel's
// submit + wait, the floor's two requests, the LangGraph.js API server's create run +
// join on a thread, Mastra's generate on a memory thread. Every turn sends the same
// user text to the same fixture model script: one tool round (clock_now), then an answer.

import type { Dispatcher } from 'undici';
import { request } from 'undici';

export type ContenderKind = 'keel' | 'floor' | 'langgraph' | 'mastra';

export interface LoadSpec {
  kind: ContenderKind;
  url: string;
  turns: number;
  scopes: number;
  inflight: number;
  /** Turns run before the runner samples /proc (lazy loads, JIT): not measured. */
  warmup: number;
  text: string;
}

/** Warm-up turns have scopes of their own: the measured turns find fresh conversations. */
export type LoadPhase = 'warmup' | 'measured';

interface Protocol {
  /** Setup before the measured load (threads); its result is handed to every turn. */
  prepare(spec: LoadSpec, dispatcher: Dispatcher): Promise<string[]>;
  turn(
    spec: LoadSpec,
    dispatcher: Dispatcher,
    state: string[],
    index: number,
    phase: LoadPhase,
  ): Promise<void>;
}

/** The scope (conversation) of turn `index`: 0 … scopes-1 in each phase. */
function slot(spec: LoadSpec, index: number, phase: LoadPhase): number {
  return (phase === 'warmup' ? spec.scopes : 0) + (index % spec.scopes);
}

function scopeName(spec: LoadSpec, index: number, phase: LoadPhase): string {
  return `${phase === 'warmup' ? 'warmup' : 'scope'}-${index % spec.scopes}`;
}

/** A JSON request to keel or a compared framework; a status of 300 or more throws. */
export async function call(
  dispatcher: Dispatcher,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await request(url, {
    method,
    dispatcher,
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300)
    throw new Error(`${method} ${url} → ${response.statusCode}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const keel: Protocol = {
  prepare: async () => [],
  async turn(spec, dispatcher, _state, index, phase) {
    const base = `${spec.url}/v1/tenants/bench`;
    const submitted = await call(dispatcher, 'POST', `${base}/turns`, {
      agent: 'agent',
      scope: scopeName(spec, index, phase),
      payload: { text: spec.text },
    });
    const waited = await call(
      dispatcher,
      'GET',
      `${base}/runs/${String(submitted.run_id)}/wait?timeout_ms=120000`,
    );
    const status = (waited.run as { status?: string } | undefined)?.status;
    if (status !== 'succeeded') throw new Error(`keel run ended ${status}`);
  },
};

const floor: Protocol = {
  prepare: async () => [],
  async turn(spec, dispatcher, _state, index, phase) {
    const submitted = await call(dispatcher, 'POST', `${spec.url}/turns`, {
      scope: scopeName(spec, index, phase),
      payload: { text: spec.text },
    });
    await call(dispatcher, 'GET', `${spec.url}/runs/${String(submitted.run_id)}/wait`);
  },
};

const langgraph: Protocol = {
  async prepare(spec, dispatcher) {
    const threads: string[] = [];
    // The measured turns' threads, then the warm-up turns' (slot()).
    for (let i = 0; i < 2 * spec.scopes; i++) {
      const thread = await call(dispatcher, 'POST', `${spec.url}/threads`, {});
      threads.push(String(thread.thread_id));
    }
    return threads;
  },
  async turn(spec, dispatcher, threads, index, phase) {
    const thread = threads[slot(spec, index, phase)];
    const run = await call(dispatcher, 'POST', `${spec.url}/threads/${thread}/runs`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: spec.text }] },
      multitask_strategy: 'enqueue',
    });
    const joined = await call(
      dispatcher,
      'GET',
      `${spec.url}/threads/${thread}/runs/${String(run.run_id)}/join`,
    );
    const messages = joined.messages as unknown[] | undefined;
    if (!Array.isArray(messages) || messages.length < 4)
      throw new Error(`langgraph run answered ${JSON.stringify(joined).slice(0, 300)}`);
  },
};

const mastra: Protocol = {
  prepare: async () => [],
  async turn(spec, dispatcher, _state, index, phase) {
    const answer = await call(dispatcher, 'POST', `${spec.url}/api/agents/agent/generate`, {
      messages: [{ role: 'user', content: spec.text }],
      threadId: scopeName(spec, index, phase),
      resourceId: 'bench',
    });
    if (typeof answer.text !== 'string' || answer.text === '')
      throw new Error(`mastra answered ${JSON.stringify(answer).slice(0, 300)}`);
  },
};

export const PROTOCOLS: Record<ContenderKind, Protocol> = { keel, floor, langgraph, mastra };
