// `npm run bench -- overhead`: the runtime's own cost of one turn with one tool round
// (fixture model in process, SQLite store, durability "full"), from enqueue to
// finalize, without HTTP — against the machine's raw durable commit measured in the
// same run, interleaved (after every turn, as many raw commits as the turn made).
// Target (issue 4): turn time ≤ 3 × (commits per turn × raw commit time).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startKeel } from '../src/main.ts';
import { enqueueTurn } from '../src/runtime/enqueue.ts';
import { waitForRun } from '../src/runtime/wait.ts';
import { countCommits, openRawCommitter } from './durable-commit.ts';
import { formatTable, median, nowMs, percentile, writeResult } from './support.ts';
import { agentSpec } from '../test/helpers/agent-spec.ts';

const WARMUP = 20;
const TURNS = 300;
const TEXT = 'what time is it?\n@call clock_now {}';

export async function runOverheadBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-overhead-'));
  const rows: (string | number)[][] = [];
  const results: Record<string, unknown> = {};
  try {
    for (const durability of ['full', 'process'] as const) {
      const config = loadConfig(
        { data_dir: join(dir, durability), listen: '127.0.0.1:0' },
        {},
        dir,
      );
      const keel = await startKeel(
        { ...config, store: { ...config.store, durability } },
        { logger: pino({ level: 'silent' }) },
      );
      const raw = openRawCommitter(dir, durability);
      try {
        await keel.store.createTenant('bench', {});
        await keel.store.putAgent('bench', 'agent', agentSpec({ model: 'fixture/bench' }));
        const commits = countCommits(keel.store);
        const turnMs: number[] = [];
        const commitsPerTurn: number[] = [];
        const rawMs: number[] = [];
        for (let i = 0; i < WARMUP + TURNS; i++) {
          const before = commits.count();
          const started = nowMs();
          const { run } = await enqueueTurn(keel.store, {
            tenant: 'bench',
            agent: 'agent',
            scope: `s${i}`,
            payload: { text: TEXT },
          });
          const done = await waitForRun(keel.store, 'bench', run.run_id, 30_000);
          const elapsed = nowMs() - started;
          if (done?.run.status !== 'succeeded')
            throw new Error(`turn ${i} ended ${done?.run.status}`);
          const made = commits.count() - before;
          for (let c = 0; c < made; c++) {
            const ms = raw.commit();
            if (i >= WARMUP) rawMs.push(ms);
          }
          if (i >= WARMUP) {
            turnMs.push(elapsed);
            commitsPerTurn.push(made);
          }
        }
        const perTurn = median(commitsPerTurn);
        const rawCommit = median(rawMs);
        const ratio = median(turnMs) / (perTurn * rawCommit);
        rows.push([
          durability,
          median(turnMs),
          percentile(turnMs, 0.99),
          perTurn,
          rawCommit,
          perTurn * rawCommit,
          ratio,
        ]);
        results[durability] = {
          turns: TURNS,
          turn_ms_median: median(turnMs),
          turn_ms_p99: percentile(turnMs, 0.99),
          commits_per_turn: perTurn,
          raw_commit_ms_median: rawCommit,
          raw_commit_ms_p99: percentile(rawMs, 0.99),
          ratio_turn_to_raw_commits: ratio,
        };
      } finally {
        raw.close();
        await keel.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\noverhead: one turn with one tool round (fixture model in process), enqueue → finalize, ${TURNS} sequential turns\n`,
  );
  console.log(
    formatTable(
      [
        'durability',
        'turn median ms',
        'turn p99 ms',
        'commits/turn',
        'raw commit ms',
        'raw × commits ms',
        'ratio',
      ],
      rows,
    ),
  );
  console.log('\ntarget: ratio ≤ 3 for durability "full"');
  console.log(`wrote ${writeResult('overhead', results)}`);
}
