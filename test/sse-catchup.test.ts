// GET T/runs/:id/events while a model call streams: a subscriber that connects in the
// middle of the call, or reconnects with Last-Event-ID in the middle of it, still ends up
// with the call's complete text — its deltas add up to it, or a `whole` delta replaces
// them. The model is the fixture server over real HTTP, slowed between chunks.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KeelClient, RunEvent as StreamEvent } from '../src/client/index.ts';
import { createKeelClient } from '../src/client/index.ts';
import { readSse } from '../src/cli/sse-reader.ts';
import type { FixtureServer } from '../src/providers/fixture-server.ts';
import { startFixtureServer } from '../src/providers/fixture-server.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

const CHUNKS = 8;
const PROMPT = `abcdefghijklmnopqrstuvwxyz\n@stream ${CHUNKS}`;

let model: FixtureServer;
let keel: TestKeel;
let client: KeelClient;

before(async () => {
  model = await startFixtureServer({ chunkDelayMs: 250 });
  keel = await startTestKeel({
    toml: `[providers.s]\ntype = "openai-compatible"\nbase_url = "${model.url}/v1"\nstream = true`,
  });
  client = createKeelClient({ baseUrl: keel.url });
  await client.tenants.create({ name: 'c' });
  await client.agents.put('c', 'a', { model: 's/fixture' });
});

after(async () => {
  await keel.close();
  await model.close();
});

/** Counts the run's deltas published in this process, as any subscriber would see them. */
function countDeltas(runId: string): { count: number; off: () => void } {
  const seen = { count: 0, off: () => {} };
  seen.off = keel.live.subscribe(runId, () => {
    seen.count += 1;
  });
  return seen;
}

/**
 * One request for the stream, read until the server closes it or until `stopAfterDeltas`
 * deltas arrived (then the connection is dropped, as a client losing its network would).
 */
async function read(
  runId: string,
  options: { lastEventId?: number; stopAfterDeltas?: number } = {},
): Promise<StreamEvent[]> {
  const abort = new AbortController();
  const response = await fetch(`${keel.url}/v1/tenants/c/runs/${runId}/events`, {
    headers: {
      accept: 'text/event-stream',
      ...(options.lastEventId !== undefined && { 'last-event-id': String(options.lastEventId) }),
    },
    signal: abort.signal,
  });
  assert.equal(response.status, 200);
  const events: StreamEvent[] = [];
  let deltas = 0;
  try {
    for await (const message of readSse(response.body as ReadableStream<Uint8Array>)) {
      const event = JSON.parse(message.data) as StreamEvent;
      events.push(event);
      if (event.type === 'model.delta' && ++deltas === options.stopAfterDeltas) {
        abort.abort();
        break;
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  }
  return events;
}

/** What a client builds from deltas: appends each, replaces on `whole`. */
function textOf(events: StreamEvent[]): string {
  let text = '';
  for (const event of events) {
    if (event.type !== 'model.delta') continue;
    text = event.data.whole ? event.data.text : text + event.data.text;
  }
  return text;
}

function replyOf(events: StreamEvent[]): string {
  const last = events.at(-1);
  if (last?.type !== 'run.succeeded') assert.fail(`ended with ${last?.type}`);
  return String(last.data.output.reply);
}

describe('run events (SSE) in the middle of a streamed model call', () => {
  it('a subscriber that connects mid-call gets the complete answer', async () => {
    const created = await client.turns.submit('c', {
      agent: 'a',
      scope: 'mid',
      payload: { text: PROMPT },
    });
    const published = countDeltas(created.run_id);
    try {
      await waitFor('two deltas published', () => published.count >= 2);
      const events = await read(created.run_id);
      const reply = replyOf(events);
      assert.equal(reply, 'echo: abcdefghijklmnopqrstuvwxyz');
      // Connected while the call streamed: some of its deltas, not all of them.
      const live = events.filter((e) => e.type === 'model.delta' && !e.data.whole).length;
      assert.ok(live > 0 && live < CHUNKS, `${live} live deltas`);
      assert.equal(textOf(events), reply);
    } finally {
      published.off();
    }
  });

  it('a subscriber that reconnects with Last-Event-ID mid-call gets the complete answer', async () => {
    const created = await client.turns.submit('c', {
      agent: 'a',
      scope: 'reconnect',
      payload: { text: PROMPT },
    });
    const published = countDeltas(created.run_id);
    try {
      const first = await read(created.run_id, { stopAfterDeltas: 2 });
      const lastSeq = Math.max(...first.flatMap((e) => (e.seq === undefined ? [] : [e.seq])));
      // The connection stays down while two more chunks are published.
      const before = published.count;
      await waitFor('two more deltas published', () => published.count >= before + 2);
      const second = await read(created.run_id, { lastEventId: lastSeq });
      assert.ok(second.some((e) => e.type === 'model.delta' && !e.data.whole));
      const reply = replyOf(second);
      assert.equal(textOf([...first, ...second]), reply);
    } finally {
      published.off();
    }
  });
});
