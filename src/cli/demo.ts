// `keel demo` / `npm run demo`: the self-contained tour on a fresh machine, no keys.
// Starts `keel fixture-model` and `keel serve` as child processes (so one can be
// killed) on free loopback ports with a temporary data dir, then walks through a turn
// with tools streamed live, its trace, pull-only results, a delivery claimed and acked,
// and a SIGKILL mid-run that resumes without repeating a recorded tool call. Every step
// says what it proves. Cleans up its children and temp dir; exits non-zero on failure.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelApiError } from '../client/index.ts';
import type { KeelChild } from './demo-processes.ts';
import { freePort, startKeelChild, stopChild } from './demo-processes.ts';
import { parseCommand } from './args.ts';
import { UsageError } from './errors.ts';
import type { StreamEvent, TraceEvent } from '../events.ts';
import { EventPrinter, replyText } from './event-printer.ts';
import type { Connection } from './keel.ts';
import { connect } from './keel.ts';
import { waitForTerminal } from './turn.ts';

export const DEMO_USAGE = 'keel demo [--keep]   (--keep leaves the temp dir for a look)';

const TENANT = 'demo';
const AGENT = 'assistant';
const KEEL_READY = /keel listening on (\S+)/;
const MODEL_READY = /fixture model listening on (\S+)/;

type Write = (text: string) => void;

class Tour {
  private step = 0;
  readonly proved: string[] = [];
  constructor(readonly write: Write) {}

  title(text: string): void {
    this.step += 1;
    this.write(`\n━━ ${this.step}. ${text}\n`);
  }
  say(text: string): void {
    this.write(`   ${text}\n`);
  }
  proves(text: string): void {
    this.proved.push(text);
    this.write(`   ✓ proves: ${text}\n`);
  }
}

/** Indents every line of streamed output, however the chunks split it. */
function indented(write: Write): Write {
  let lineStart = true;
  return (chunk) => {
    let out = '';
    for (const char of chunk) {
      if (lineStart && char !== '\n') out += '   ';
      out += char;
      lineStart = char === '\n';
    }
    write(out);
  };
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`demo check failed: ${message}`);
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('KEEL_')) env[key] = value;
  return { ...env, KEEL_LOG_LEVEL: 'warn', ...extra };
}

async function submit(
  client: Connection,
  scope: string,
  text: string,
  extra: Partial<Parameters<Connection['keel']['turns']['submit']>[1]> = {},
) {
  return client.keel.turns.submit(client.tenant, {
    agent: AGENT,
    scope,
    payload: { text },
    ...extra,
  });
}

async function trace(client: Connection, runId: string): Promise<TraceEvent[]> {
  // The route's schema types events loosely; their shapes are the union's (src/events.ts).
  return (await client.keel.runs.trace(client.tenant, runId)).events as TraceEvent[];
}

function summary(event: TraceEvent): string {
  switch (event.type) {
    case 'model.response': {
      const d = event.data;
      return `step ${d.step}, ${d.finish_reason}, ${d.usage.input_tokens}+${d.usage.output_tokens} tokens, ${d.latency_ms} ms, raw HTTP bodies kept`;
    }
    case 'tool.call':
      return `${event.data.name} (${event.data.effect ?? 'effect ?'})`;
    case 'tool.result':
      return `${event.data.name} ${event.data.ok ? 'ok' : event.data.error?.code}`;
    case 'run.claimed':
      return `attempt ${event.data.attempt}`;
    case 'run.resumed':
      return `attempt ${event.data.attempt}, ${event.data.entries_loaded} entries loaded, re-run: ${JSON.stringify(event.data.rerun_calls)}`;
    default:
      return '';
  }
}

async function streamTurn(tour: Tour, client: Connection): Promise<string> {
  tour.title('A turn that calls tools, streamed live (SSE)');
  const text =
    'What time is it, and what is 6 × 7?\n@call clock_now {}\n@call calc_eval {"expression":"6*7"}\n@stream 8';
  tour.say(`POST /turns  scope "tour"  text: ${JSON.stringify(text)}`);
  const created = await submit(client, 'tour', text, { follow: true });
  tour.say(`→ 202 run ${created.run_id} queued; following GET …/runs/${created.run_id}/events`);
  const printer = new EventPrinter(indented(tour.write), { answerPrefix: 'assistant> ' });
  for await (const event of client.keel.turns.events(client.tenant, created.run_id))
    printer.take(event);
  check(printer.outcome.status === 'succeeded', `the streamed run ended ${printer.outcome.status}`);
  tour.proves(
    'the openai-compatible provider path end to end over HTTP (fixture-model server), tool calls between model steps, and the answer streamed as model.delta chunks while it was written',
  );
  return created.run_id as string;
}

async function showTrace(tour: Tour, client: Connection, runId: string): Promise<void> {
  tour.title('The trace: every step was committed before the next one started');
  const events = await trace(client, runId);
  for (const event of events)
    tour.say(`${String(event.seq).padStart(3)} ${event.type.padEnd(15)} ${summary(event)}`);
  const response = events.find((event) => event.type === 'model.response');
  check(
    response?.type === 'model.response' && response.data.raw?.request,
    'model.response carries the raw request body',
  );
  tour.proves(
    'a durable, ordered record of the run (GET …/trace): model responses with raw bodies, each tool call and result, the terminal event',
  );
}

async function pullOnly(tour: Tour, client: Connection): Promise<void> {
  tour.title('Pull-only results: no webhook, the client asks (idempotent by request_id)');
  // The same request twice: the second must come back as the first run.
  const submitPull = () =>
    submit(
      client,
      'pull',
      'summarize: durable runs survive crashes\n@reply runs are checkpointed after every step',
      { request_id: 'demo-pull-1' },
    );
  const first = await submitPull();
  const run = await waitForTerminal(client, first.run_id);
  tour.say(
    `GET …/runs/${first.run_id}/wait → ${run.status}: ${JSON.stringify(replyText(run.output))}`,
  );
  const again = await submitPull();
  tour.say(
    `the same request again → ${again.run_id === first.run_id ? 'the same run' : 'a NEW run'}, deduplicated: ${again.deduplicated}`,
  );
  check(
    again.run_id === first.run_id && again.deduplicated === true,
    'a replayed request_id returns the same run',
  );
  tour.proves(
    'results wait in keel until asked for (long-poll /wait, no fixed polling), and a retried request never runs twice',
  );
}

async function delivery(tour: Tour, client: Connection): Promise<void> {
  tour.title('A delivery claimed and acked (the outbox a channel adapter drains)');
  const created = await submit(
    client,
    'inbox',
    'remind me to water the plants\n@reply noted: water the plants',
    {
      delivery: { destination: 'demo:inbox' },
    },
  );
  await waitForTerminal(client, created.run_id);
  const claimed = await client.keel.deliveries.claim(client.tenant, {
    destination_prefix: 'demo:',
    lease_ms: 30_000,
  });
  const item = claimed.deliveries[0];
  check(item, 'a pending delivery was claimed');
  tour.say(
    `claim → ${item.delivery_id} to ${item.destination}, payload ${JSON.stringify(item.payload)}, key ${item.idempotency_key}`,
  );
  const acked = await client.keel.deliveries.ack(client.tenant, item.delivery_id, {
    claim_token: item.claim_token,
    outcome: 'delivered',
  });
  tour.say(`ack delivered → status ${acked.delivery.status}`);
  const empty = await client.keel.deliveries.claim(client.tenant, {
    destination_prefix: 'demo:',
  });
  check(
    acked.delivery.status === 'delivered' && empty.deliveries.length === 0,
    'an acked delivery is not handed out again',
  );
  tour.proves(
    "the result was written to an outbox in the run's final transaction; a sender claims it with a lease and acks it exactly once",
  );
}

async function crashAndResume(
  tour: Tour,
  client: Connection,
  restart: () => Promise<void>,
  kill: () => Promise<void>,
): Promise<void> {
  tour.title('kill -9 mid-run, restart, resume without repeating a recorded tool call');
  const text =
    'check the time, then add\n@call clock_now {}\n@call calc_eval {"expression":"2+2"}\n@sleep 1200';
  const created = await submit(client, 'crash', text);
  tour.say(
    `run ${created.run_id}: the model takes 1.2 s per step; waiting for the first tool result…`,
  );
  const controller = new AbortController();
  try {
    const events: AsyncIterable<StreamEvent> = client.keel.turns.events(
      client.tenant,
      created.run_id,
      { signal: controller.signal },
    );
    for await (const event of events) {
      if (event.type === 'tool.result') {
        tour.say(
          `recorded: ${event.data.name} → ${event.data.ok ? JSON.stringify(event.data.result) : event.data.error?.code}`,
        );
        break;
      }
    }
  } finally {
    controller.abort();
  }
  await kill();
  tour.say(
    'SIGKILL sent to keel serve while the model was working on step 2 (no goodbye, no cleanup)',
  );
  await restart();
  tour.say('keel serve restarted on the same data dir; it reclaims the run at startup');
  const run = await waitForTerminal(client, created.run_id);
  const events = await trace(client, created.run_id);
  const results = events.filter((event) => event.type === 'tool.result');
  const clockResults = results.filter((event) => event.data.name === 'clock_now');
  const resumed = events.find((event) => event.type === 'run.resumed');
  const steps = events
    .filter((event) => event.type === 'model.response')
    .map((event) => event.data.step);
  tour.say(
    `run ${run.status}, attempt ${run.attempt}; ${resumed ? `run.resumed: ${summary(resumed)}` : 'no run.resumed event'}`,
  );
  tour.say(
    `tool results in the trace: ${results.map((event) => event.data.name).join(', ')}; model steps recorded: ${steps.join(', ')}`,
  );
  check(run.status === 'succeeded', `the resumed run ended ${run.status}`);
  check(resumed && run.attempt === 2, 'the run was resumed by a second attempt');
  check(
    clockResults.length === 1,
    `clock_now has ${clockResults.length} results (expected exactly 1)`,
  );
  check(new Set(steps).size === steps.length, 'no model step was requested twice');
  tour.say(`answer: ${JSON.stringify(replyText(run.output))}`);
  tour.proves(
    'a process crash loses at most the step in flight: the recorded model response and tool result were reused, not repeated',
  );
}

export async function demoCommand(
  argv: string[],
  write: Write = (text) => void process.stdout.write(text),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, { keep: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`demo takes no arguments: ${positionals[0]}`);
  const started = Date.now();
  const tour = new Tour(write);
  const dir = await mkdtemp(join(tmpdir(), 'keel-demo-'));
  const adminToken = `demo-admin-${randomBytes(12).toString('hex')}`;
  const children: KeelChild[] = [];
  let keel: KeelChild | null = null;
  try {
    tour.title(
      'Start a fixture model server and keel (child processes, temp data dir, free loopback ports)',
    );
    const stillStarting =
      (what: string) =>
      (ms: number): void =>
        tour.say(
          `still starting keel ${what} (${Math.round(ms / 1000)} s; a busy machine is slow)…`,
        );
    const modelPort = await freePort();
    const model = await startKeelChild(
      ['fixture-model', '--listen', `127.0.0.1:${modelPort}`, '--chunk-delay-ms', '20'],
      childEnv({}),
      MODEL_READY,
      { onWaiting: stillStarting('fixture-model') },
    );
    children.push(model);
    tour.say(`fixture model: ${model.url}/v1 (OpenAI-compatible, deterministic, no key)`);
    const keelPort = await freePort();
    const configPath = join(dir, 'keel.toml');
    await writeFile(
      configPath,
      [
        `listen = "127.0.0.1:${keelPort}"`,
        `data_dir = ${JSON.stringify(join(dir, 'data'))}`,
        '',
        '[providers.local]',
        'type = "openai-compatible"',
        `base_url = "${model.url}/v1"`,
        '',
      ].join('\n'),
    );
    const startServe = async (): Promise<void> => {
      keel = await startKeelChild(
        ['serve', '--config', configPath],
        childEnv({ KEEL_ADMIN_TOKEN: adminToken }),
        KEEL_READY,
        { onWaiting: stillStarting('serve') },
      );
      children.push(keel);
    };
    await startServe();
    tour.say(`keel: ${(keel as KeelChild | null)?.url} (data in ${dir})`);

    tour.title('Set up a tenant, an agent and a tenant token (admin token → tenant token)');
    const url = (keel as KeelChild | null)?.url ?? '';
    const { keel: admin } = connect({ url, token: adminToken, tenant: TENANT, given: {} });
    await admin.tenants.create({ name: TENANT });
    const agent = await admin.agents.putText(
      TENANT,
      AGENT,
      'model = "local/fixture"\npersona = "You are the keel demo assistant."\n',
      'application/toml',
    );
    tour.say(
      `agent ${agent.agent.name}: model ${agent.agent.model} (provider "local" = the fixture-model server)`,
    );
    const token = await admin.tenants.mintToken(TENANT, { name: 'demo' });
    const client = connect({ url, token: token.token, tenant: TENANT, given: {} });
    const forbidden = await client.keel.tenants.list().catch((error: unknown) => error);
    check(
      forbidden instanceof KeelApiError && forbidden.code === 'FORBIDDEN',
      'a tenant token cannot list tenants',
    );
    tour.say(
      `tenant token created (shown once, stored hashed); with it GET /v1/tenants → ${forbidden.status} ${forbidden.code}`,
    );
    tour.proves('tenants are isolated: a tenant token reaches only its own tenant');

    const runId = await streamTurn(tour, client);
    await showTrace(tour, client, runId);
    await pullOnly(tour, client);
    await delivery(tour, client);
    await crashAndResume(tour, client, startServe, async () => {
      const current = keel as KeelChild | null;
      current?.child.kill('SIGKILL');
      await current?.exited;
    });

    tour.title('What this showed');
    for (const line of tour.proved) tour.say(`• ${line}`);
    tour.say(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
    write(
      [
        '',
        'Where to look next:',
        '  npm start                         run keel for real (keel serve; add providers in keel.toml)',
        '  npx keel chat assistant           talk to an agent in the terminal (after creating one)',
        '  npx keel turn assistant s1 "hi" --stream',
        '  README.md, docs/http-api.md       the HTTP API, incl. GET …/runs/:id/events',
        '  docs/configuration.md             keel.toml: providers (openai, anthropic, ollama …)',
        '  docs/deploy.md                    keel as a service (systemd, launchd); where its files live',
        '',
      ].join('\n'),
    );
    return 0;
  } catch (error) {
    const last = children.at(-1);
    write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    if (last) write(`last keel stderr:\n${last.stderr().slice(-2000)}\n`);
    return 1;
  } finally {
    await Promise.all(children.map((child) => stopChild(child)));
    if (values.keep) write(`kept ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}
