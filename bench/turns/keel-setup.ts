// keel's side of the turn benchmark: the tenant and agent created over HTTP before the
// load, and keel's commits per turn (counted in this process on a short run, with the
// store wrapper of bench/durable-commit.ts) — the number of raw commits the floor makes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startKeel } from '../../src/main.ts';
import { agentSpec } from '../../test/helpers/agent-spec.ts';
import { countCommits } from '../durable-commit.ts';

async function send(method: string, url: string, body: string, type: string): Promise<void> {
  const response = await fetch(url, { method, headers: { 'content-type': type }, body });
  if (response.status >= 300)
    throw new Error(`${method} ${url} → ${response.status}: ${await response.text()}`);
}

/**
 * What the agent offers the model: `peers` — only `clock_now`, the one tool the LangGraph.js
 * and Mastra agents have (bench/peers), so every contender's model requests carry the same
 * tool definitions; `all` — keel's whole built-in set (16 tools; the agent's default).
 */
export type BenchTools = 'peers' | 'all';

/** Tenant "bench" with agent "agent" on `model`, through the API (tokenless loopback). */
export async function setUpKeel(
  url: string,
  model: string,
  tools: BenchTools = 'peers',
): Promise<void> {
  await send('POST', `${url}/v1/tenants`, JSON.stringify({ name: 'bench' }), 'application/json');
  await send(
    'PUT',
    `${url}/v1/tenants/bench/agents/agent`,
    JSON.stringify(
      agentSpec({ model, ...(tools === 'peers' && { allowed_tools: ['clock_now'] }) }),
    ),
    'application/json',
  );
}

/** keel's write transactions per turn of `text` (fixture model in process). */
export async function countKeelCommits(text: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-commits-'));
  const loaded = loadConfig({ data_dir: dir, listen: '127.0.0.1:0' }, {}, dir);
  const keel = await startKeel(
    { ...loaded, memory: { ...loaded.memory, embedder: 'hash' } },
    { logger: pino({ level: 'silent' }) },
  );
  const turns = 20;
  try {
    await setUpKeel(keel.url, 'fixture/bench');
    const commits = countCommits(keel.store);
    for (let index = 0; index < turns; index++) {
      const submitted = await fetch(`${keel.url}/v1/tenants/bench/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'agent', scope: `s-${index}`, payload: { text } }),
      });
      const { run_id: runId } = (await submitted.json()) as { run_id: string };
      await (
        await fetch(`${keel.url}/v1/tenants/bench/runs/${runId}/wait?timeout_ms=60000`)
      ).text();
    }
    return Math.round(commits.count() / turns);
  } finally {
    await keel.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
