// `npm run bench -- checkpoint`: what one durable round costs as a conversation grows.
//
// A round is what the run loop writes for one tool round, four commits: the
// `model.request` event (before the provider call), the assistant entry with its
// `model.response` event (before the tool runs), the `tool.call` intent record (before
// the tool runs, so a resume can tell "in flight" from "never started"), and the tool
// result with its `tool.result` event. keel's store does these through appendProgress on
// a claimed run; beside it, in the same process run and interleaved, a bare SQLite
// transaction inserting the same rows and a whole-file JSON snapshot per commit.
// (The loop itself caps max_steps at 200, so the rounds are driven at the store calls the
// loop makes.)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Store } from '../src/store/store.ts';
import type { AssistantBody, EntryBody, JsonObject, ToolResultBody, Usage } from '../src/types.ts';
import type { RoundWriter } from './checkpoint-baselines.ts';
import { openBareSqlite, openSnapshotFile } from './checkpoint-baselines.ts';
import { bytesWritten, formatTable, median, nowMs, percentile, writeResult } from './support.ts';
import { agentSpec } from '../test/helpers/agent-spec.ts';

const ROUND_COUNTS = [10, 100, 1000];
const REPETITIONS = 3;
type Durability = 'full' | 'process';
const CONTENDERS = ['keel', 'bare-sqlite', 'snapshot'] as const;
type Contender = (typeof CONTENDERS)[number];

interface Trial {
  contender: Contender;
  durability: Durability;
  rounds: number;
  roundMs: number[];
  bytesPerRoundLast10: number;
  totalBytes: number;
}

function assistantBody(round: number): AssistantBody {
  return {
    text: '',
    tool_calls: [
      {
        call_id: `call_${round}`,
        name: 'lookup',
        arguments: JSON.stringify({ query: `what happened in chapter ${round}`, page: round }),
      },
    ],
    usage: { input_tokens: 900 + round, output_tokens: 40 },
    finish_reason: 'tool_calls',
    model: 'fixture/bench',
  };
}

function toolResultBody(round: number): ToolResultBody {
  return {
    call_id: `call_${round}`,
    name: 'lookup',
    ok: true,
    result: {
      page: round,
      title: `Chapter ${round}`,
      summary: 'x'.repeat(220),
      links: [`https://example.org/${round}`],
    },
    duration_ms: 1,
  };
}

async function keelWriter(
  dir: string,
  durability: Durability,
): Promise<{ writer: AsyncRoundWriter; close(): Promise<void> }> {
  const store: Store = await openSqliteStore({ path: join(dir, 'keel.db'), durability });
  await store.createTenant('bench', {});
  await store.putAgent('bench', 'agent', agentSpec({ model: 'fixture/bench', max_steps: 200 }));
  await store.enqueueRun({
    run_id: '0190f000-0000-7000-8000-000000000001',
    tenant: 'bench',
    agent: 'agent',
    scope: 'bench',
    source: 'api',
    input: { text: 'go' },
    request_id: null,
    fingerprint: 'bench',
    delivery: null,
    on_busy: 'enqueue',
  });
  const claimed = await store.claimNextRun({ owner: 'bench', lease_ms: 600_000 });
  if (!claimed) throw new Error('bench: nothing claimed');
  const fence = { run_id: claimed.run.run_id, attempt: claimed.run.attempt };
  const usage: Usage = { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0 };
  await store.appendProgress(fence, {
    entries: [{ kind: 'user', body: { text: 'go', payload: { text: 'go' } } }],
  });
  const writer: AsyncRoundWriter = {
    async writeRound(round) {
      const assistant = assistantBody(round);
      usage.model_calls += 1;
      usage.input_tokens += assistant.usage.input_tokens;
      usage.output_tokens += assistant.usage.output_tokens;
      const assistantEntry: EntryBody = { kind: 'assistant', body: assistant };
      await store.appendProgress(fence, {
        events: [{ type: 'model.request', data: { step: round, model: 'fixture/bench' } }],
      });
      await store.appendProgress(fence, {
        entries: [assistantEntry],
        events: [
          {
            type: 'model.response',
            data: {
              step: round,
              usage: assistant.usage,
              latency_ms: 0,
              finish_reason: 'tool_calls',
            },
          },
        ],
        steps: round,
        usage: { ...usage },
      });
      const result = toolResultBody(round);
      usage.tool_calls += 1;
      await store.appendProgress(fence, {
        events: [
          {
            type: 'tool.call',
            data: {
              step: round,
              call_id: result.call_id,
              name: result.name,
              attempt: fence.attempt,
              effect: 'read_only',
              idempotency_key: `${fence.run_id}:${result.call_id}`,
            },
          },
        ],
        usage: { ...usage },
      });
      await store.appendProgress(fence, {
        entries: [{ kind: 'tool_result', body: result }],
        events: [{ type: 'tool.result', data: result as unknown as JsonObject }],
        usage: { ...usage },
      });
    },
  };
  return { writer, close: () => store.close() };
}

interface AsyncRoundWriter {
  writeRound(round: number): Promise<void>;
}

function syncWriter(writer: RoundWriter): AsyncRoundWriter {
  return {
    async writeRound(round) {
      const assistant = JSON.stringify(assistantBody(round));
      const result = JSON.stringify(toolResultBody(round));
      writer.writeRound(assistant, result, {
        request: JSON.stringify({ step: round, model: 'fixture/bench' }),
        response: JSON.stringify({ step: round, usage: { input_tokens: 900, output_tokens: 40 } }),
        intent: JSON.stringify({ step: round, call_id: `call_${round}`, name: 'lookup' }),
        result,
      });
    },
  };
}

async function runTrial(
  contender: Contender,
  durability: Durability,
  rounds: number,
): Promise<Trial> {
  const dir = mkdtempSync(join(tmpdir(), `keel-bench-${contender}-`));
  let writer: AsyncRoundWriter;
  let close: () => Promise<void>;
  if (contender === 'keel') {
    ({ writer, close } = await keelWriter(dir, durability));
  } else {
    const inner =
      contender === 'bare-sqlite'
        ? openBareSqlite(dir, durability === 'full' ? 'FULL' : 'NORMAL')
        : openSnapshotFile(dir, durability === 'full');
    writer = syncWriter(inner);
    close = async () => inner.close();
  }
  const roundMs: number[] = [];
  const startBytes = bytesWritten();
  let lastTenthStartBytes = startBytes;
  const lastTenthFrom = rounds - Math.max(1, Math.floor(rounds / 10));
  for (let round = 1; round <= rounds; round += 1) {
    if (round === lastTenthFrom + 1) lastTenthStartBytes = bytesWritten();
    const started = nowMs();
    await writer.writeRound(round);
    roundMs.push(nowMs() - started);
  }
  const endBytes = bytesWritten();
  await close();
  rmSync(dir, { recursive: true, force: true });
  return {
    contender,
    durability,
    rounds,
    roundMs,
    bytesPerRoundLast10: (endBytes - lastTenthStartBytes) / (rounds - lastTenthFrom),
    totalBytes: endBytes - startBytes,
  };
}

interface Summary {
  contender: Contender;
  durability: Durability;
  rounds: number;
  median_ms: number;
  p99_ms: number;
  last10_median_ms: number;
  bytes_per_round_last10: number;
  total_bytes: number;
}

function summarize(trials: Trial[]): Summary {
  const first = trials[0] as Trial;
  const lastTenth = (trial: Trial): number[] =>
    trial.roundMs.slice(-Math.max(1, Math.floor(trial.rounds / 10)));
  return {
    contender: first.contender,
    durability: first.durability,
    rounds: first.rounds,
    median_ms: median(trials.map((trial) => median(trial.roundMs))),
    p99_ms: median(trials.map((trial) => percentile(trial.roundMs, 0.99))),
    last10_median_ms: median(trials.map((trial) => median(lastTenth(trial)))),
    bytes_per_round_last10: median(trials.map((trial) => trial.bytesPerRoundLast10)),
    total_bytes: median(trials.map((trial) => trial.totalBytes)),
  };
}

export async function runCheckpointBench(): Promise<void> {
  const trials: Trial[] = [];
  // Warm up every contender once so the first measured trial is not paying for JIT.
  for (const contender of CONTENDERS) await runTrial(contender, 'process', 20);
  for (let repetition = 1; repetition <= REPETITIONS; repetition += 1) {
    for (const rounds of ROUND_COUNTS) {
      for (const durability of ['full', 'process'] as const) {
        for (const contender of CONTENDERS) {
          trials.push(await runTrial(contender, durability, rounds));
        }
      }
    }
    process.stderr.write(`checkpoint: repetition ${repetition}/${REPETITIONS} done\n`);
  }
  const summaries: Summary[] = [];
  for (const durability of ['full', 'process'] as const) {
    for (const rounds of ROUND_COUNTS) {
      for (const contender of CONTENDERS) {
        summaries.push(
          summarize(
            trials.filter(
              (trial) =>
                trial.contender === contender &&
                trial.durability === durability &&
                trial.rounds === rounds,
            ),
          ),
        );
      }
    }
  }
  const find = (contender: Contender, durability: Durability, rounds: number): Summary =>
    summaries.find(
      (summary) =>
        summary.contender === contender &&
        summary.durability === durability &&
        summary.rounds === rounds,
    ) as Summary;

  console.log(
    '\ncheckpoint: cost of one durable tool round (4 commits), medians of 3 interleaved repetitions\n',
  );
  console.log(
    formatTable(
      [
        'durability',
        'R',
        'contender',
        'round median ms',
        'round p99 ms',
        'last 10% median ms',
        'bytes/round (last 10%)',
      ],
      summaries.map((summary) => [
        summary.durability,
        summary.rounds,
        summary.contender,
        summary.median_ms,
        summary.p99_ms,
        summary.last10_median_ms,
        summary.bytes_per_round_last10,
      ]),
    ),
  );
  const ratios = (['full', 'process'] as const).map((durability) => {
    const keel100 = find('keel', durability, 100).median_ms;
    const keel1000 = find('keel', durability, 1000).median_ms;
    return {
      durability,
      growth_exponent_100_to_1000: Math.log(keel1000 / keel100) / Math.log(10),
      keel_over_bare_at_1000: keel1000 / find('bare-sqlite', durability, 1000).median_ms,
      snapshot_over_keel_at_1000:
        find('snapshot', durability, 1000).last10_median_ms /
        find('keel', durability, 1000).last10_median_ms,
      snapshot_bytes_over_keel_at_1000:
        find('snapshot', durability, 1000).bytes_per_round_last10 /
        find('keel', durability, 1000).bytes_per_round_last10,
    };
  });
  console.log('\nratios (targets: growth ≈ 0, keel/bare ≤ 1.5, snapshot/keel ≥ 5 at R=1000)\n');
  console.log(
    formatTable(
      [
        'durability',
        'growth exponent R100→1000',
        'keel / bare SQLite',
        'snapshot / keel (last 10%)',
        'snapshot bytes / keel bytes',
      ],
      ratios.map((ratio) => [
        ratio.durability,
        ratio.growth_exponent_100_to_1000,
        ratio.keel_over_bare_at_1000,
        ratio.snapshot_over_keel_at_1000,
        ratio.snapshot_bytes_over_keel_at_1000,
      ]),
    ),
  );
  const path = writeResult('checkpoint', {
    measured_at: new Date().toISOString(),
    summaries,
    ratios,
  });
  console.log(`\nwrote ${path}`);
}
