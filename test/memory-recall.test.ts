// Agent `recall = { namespace, k }` end to end: a whole keel whose model is the fixture
// model served over HTTP (the openai-compatible path), every request body recorded. A
// fact stored by a tool call in one turn is in the model's input of a later turn in
// another scope (so not through the thread's context), the trace's `memory.recall`
// event names exactly the facts that were added, and the note entry sits before the
// user entry. Bad `recall` settings are 400s naming the field. Then the hook alone: what
// it does when the search fails, and how it cuts a long message.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KeelError } from '../src/errors.ts';
import type { FixtureServer } from '../src/providers/fixture-server.ts';
import { recallForTurn } from '../src/runtime/recall.ts';
import type { MemoryPort } from '../src/tools/builtin/memory-port.ts';
import { startFixtureServer } from '../src/providers/fixture-server.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';

const T = '/v1/tenants/rc';
const FACT = 'My dog Rex eats salmon kibble twice a day.';
const DISTRACTORS = [
  'The car needs new tyres before winter.',
  'Anna works as a nurse at the city hospital.',
  'The spare key is under the flower pot.',
  'Our landlord is called Mr. Patel.',
];

let model: FixtureServer;
let keel: TestKeel;
const bodies: string[] = [];

async function api(
  method: string,
  path: string,
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${keel.url}${path}`, {
    method,
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function turn(
  scope: string,
  text: string,
): Promise<{ runId: string; events: { type: string; data: Record<string, unknown> }[] }> {
  const submitted = await api('POST', `${T}/turns`, { agent: 'a', scope, payload: { text } });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  const runId = submitted.body.run_id as string;
  const waited = await api('GET', `${T}/runs/${runId}/wait?timeout_ms=20000`);
  assert.equal(waited.body.run.status, 'succeeded', JSON.stringify(waited.body.run));
  const trace = await api('GET', `${T}/runs/${runId}/trace`);
  return { runId, events: trace.body.events };
}

before(async () => {
  model = await startFixtureServer({
    onRequest: (request) => {
      if (request.path.endsWith('/chat/completions')) bodies.push(request.body);
    },
  });
  keel = await startTestKeel({
    toml: `[memory]\nembedder = "hash"\n[providers.local]\ntype = "openai-compatible"\nbase_url = "${model.url}/v1"\n`,
  });
  assert.equal((await api('POST', '/v1/tenants', { name: 'rc' })).status, 201);
  const agent = await api('PUT', `${T}/agents/a`, {
    model: 'local/fixture',
    allowed_families: ['memory'],
    recall: { namespace: 'home', k: 2 },
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  assert.deepEqual(agent.body.agent.recall, { namespace: 'home', k: 2 });
});

after(async () => {
  await keel?.close();
  await model?.close();
});

describe('agent recall', () => {
  it('a fact stored in one turn is in the model input of a later turn in another scope', async () => {
    for (const [index, text] of DISTRACTORS.entries()) {
      assert.equal((await api('PUT', `${T}/memory/home/d${index}`, { text })).status, 201);
    }
    const first = await turn(
      'kitchen',
      `@call memory_put {"namespace": "home", "text": ${JSON.stringify(FACT)}}\nremember this`,
    );
    const firstRecall = first.events.filter((event) => event.type === 'memory.recall');
    assert.equal(firstRecall.length, 1);
    // The fact did not exist yet when the first turn began.
    const firstFacts = firstRecall[0]?.data.facts as { text: string }[];
    assert.ok(!firstFacts.some((fact) => fact.text === FACT));

    const sent = bodies.length;
    const second = await turn('garden', 'What does Rex eat?');
    const recalls = second.events.filter((event) => event.type === 'memory.recall');
    assert.equal(recalls.length, 1);
    const data = recalls[0]?.data as {
      namespace: string;
      k: number;
      facts: { id: string; text: string; lexical_rank: number | null }[];
    };
    assert.equal(data.namespace, 'home');
    assert.equal(data.k, 2);
    assert.equal(data.facts.length, 2);
    assert.equal(data.facts[0]?.text, FACT);
    assert.equal(data.facts[0]?.lexical_rank, 1);
    // The recall is recorded before the first model request of the turn.
    const types = second.events.map((event) => event.type);
    assert.ok(types.indexOf('memory.recall') < types.indexOf('model.request'));

    // What the model received in the second turn: the recalled facts, and nothing of
    // the first turn's thread (another scope).
    const input = bodies.slice(sent).join('\n');
    assert.ok(bodies.length > sent);
    for (const fact of data.facts)
      assert.ok(input.includes(JSON.stringify(fact.text).slice(1, -1)), fact.text);
    const notRecalled = DISTRACTORS.filter(
      (text) => !data.facts.some((fact) => fact.text === text),
    );
    for (const text of notRecalled) assert.ok(!input.includes(text), `${text} was not recalled`);
    assert.ok(!input.includes('remember this'));

    // The journal: the note entry comes right before the user entry.
    const entries = await keel.store.loadEntries(second.runId);
    assert.deepEqual(
      entries.slice(0, 2).map((entry) => entry.kind),
      ['note', 'user'],
    );
    assert.match((entries[0]?.body as { text: string }).text, /Rex eats salmon/);
    console.log(
      `recall: ${data.facts.length} facts added (${data.facts.map((fact) => fact.id).join(', ')}), model requests in turn 2: ${bodies.length - sent}`,
    );
  });

  it('an agent without recall gets no note and no event', async () => {
    assert.equal((await api('PUT', `${T}/agents/plain`, { model: 'local/fixture' })).status, 201);
    const submitted = await api('POST', `${T}/turns`, {
      agent: 'plain',
      scope: 'x',
      payload: { text: 'What does Rex eat?' },
    });
    const runId = submitted.body.run_id as string;
    await api('GET', `${T}/runs/${runId}/wait?timeout_ms=20000`);
    const trace = await api('GET', `${T}/runs/${runId}/trace`);
    assert.ok(!trace.body.events.some((event: { type: string }) => event.type === 'memory.recall'));
    const entries = await keel.store.loadEntries(runId);
    assert.ok(!entries.some((entry) => entry.kind === 'note'));
  });

  it('bad recall settings are 400s naming the field, and nothing changes', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ namespace: 'home', k: 0 }, 'VALIDATION_FAILED', /recall\.k/],
      [{ namespace: 'home', k: 21 }, 'VALIDATION_FAILED', /recall\.k/],
      [{ namespace: 'not a name!', k: 2 }, 'VALIDATION_FAILED', /recall\.namespace/],
      [{ namespace: 'home', k: 2, top: 1 }, 'UNKNOWN_FIELD', /recall/],
      ['home', 'VALIDATION_FAILED', /recall/],
    ];
    for (const [recall, code, field] of cases) {
      const response = await api('PUT', `${T}/agents/a`, { model: 'local/fixture', recall });
      assert.equal(response.status, 400, JSON.stringify(recall));
      assert.equal(response.body.error.code, code);
      assert.match(response.body.error.message, field);
    }
    const agent = await api('GET', `${T}/agents/a`);
    assert.deepEqual(agent.body.agent.recall, { namespace: 'home', k: 2 });
  });
});

describe('recallForTurn (the hook alone)', () => {
  const recall = { namespace: 'home', k: 3 };
  const port = (search: MemoryPort['search']): MemoryPort => ({ search }) as unknown as MemoryPort;

  it('a keel error is recorded in the event and the turn goes on without a note', async () => {
    const stale = await recallForTurn(
      recall,
      'hello',
      port(async () => {
        throw new KeelError(
          'EMBEDDER_MISMATCH',
          'namespace "home" is indexed for another embedder',
        );
      }),
    );
    assert.deepEqual(stale.entries, []);
    assert.equal(stale.event.data.error?.code, 'EMBEDDER_MISMATCH');
    const none = await recallForTurn(recall, 'hello', undefined);
    assert.deepEqual(none.entries, []);
    assert.equal(none.event.data.error?.code, 'MEMORY_UNAVAILABLE');
  });

  it('any other error propagates (the attempt ends like on every store error)', async () => {
    await assert.rejects(
      recallForTurn(
        recall,
        'hello',
        port(async () => {
          throw new Error('connection reset');
        }),
      ),
      /connection reset/,
    );
  });

  it('searches with at most 4096 bytes of the message, whole characters only', async () => {
    let asked = '';
    const result = await recallForTurn(
      recall,
      'é'.repeat(3000),
      port(async (_namespace, query) => {
        asked = query;
        return [];
      }),
    );
    assert.equal(Buffer.byteLength(asked), 4096);
    assert.equal(asked, 'é'.repeat(2048));
    assert.deepEqual(result.entries, []);
    assert.deepEqual(result.event.data.facts, []);
  });
});
