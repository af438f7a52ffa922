// `npm run bench -- mcp`: what keel adds to one MCP tool call. The same stdio server
// (test/fixtures/mcp-test-server.mjs, tool `read`) is called by a bare SDK client and by
// keel's tool path — the tenant's catalog, argument check, session, result mapping,
// tool timeout and abort signal (prepareCall + executeCall, as the loop runs them) —
// interleaved call by call, each on its own server process. The journal writes around a
// call are the loop's, measured by `overhead`. Targets (issue 13): keel adds ≤ 1 ms p50
// per call, and late calls cost what early ones do (no leak).

import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import pino from 'pino';
import type { McpSettings } from '../src/config.ts';
import { createToolCatalog } from '../src/mcp/catalog.ts';
import { createSchemaCompiler, listServerTools } from '../src/mcp/discovery.ts';
import { createMcpSessions } from '../src/mcp/sessions.ts';
import type { ToolCallEnv } from '../src/runtime/tool-step.ts';
import { executeCall, prepareCall } from '../src/runtime/tool-step.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { Agent, JsonObject } from '../src/types.ts';
import { formatTable, median, nowMs, percentile, writeResult } from './support.ts';

const CALLS = Number(process.env.KEEL_BENCH_MCP_CALLS ?? 2000);
const WARMUP = 50;
const SERVER = join(import.meta.dirname, '../test/fixtures/mcp-test-server.mjs');

export async function runMcpBench(): Promise<void> {
  const settings: McpSettings = {
    stdio: { bench: { command: process.execPath, args: [SERVER], env: {}, tenants: null } },
    idle_ms: 600_000,
    max_message_bytes: 1_048_576,
    allow_hosts: [],
  };
  const bare = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  await bare.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER] }));
  const tools = await listServerTools(bare);
  const sessions = createMcpSessions({
    settings,
    secrets: { getSecretValue: async () => null },
    logger: pino({ level: 'silent' }),
  });
  const server = {
    tenant: 'bench',
    name: 'bench',
    spec: { enabled: true, transport: { type: 'stdio', server: 'bench' } },
    tools: tools as unknown as JsonObject[],
    last_error: null,
    created_at: new Date(0).toISOString(),
    updated_at: new Date(0).toISOString(),
  };
  const toolsFor = createToolCatalog({
    builtins: createToolRegistry([]),
    store: { listMcpServers: async () => [server] },
    sessions,
    compile: createSchemaCompiler(),
  });
  const agent = { tool_timeout_ms: 30_000 } as Agent;
  const env: ToolCallEnv = {
    registry: await toolsFor('bench'),
    agent,
    run: { tenant: 'bench', agent: 'a', scope: 's', run_id: 'bench-run' },
    ports: { now: () => new Date() },
    signal: new AbortController().signal,
    runDeadline: Number.MAX_SAFE_INTEGER,
    now: Date.now,
  };

  const bareMs: number[] = [];
  const keelMs: number[] = [];
  // With NODE_OPTIONS=--expose-gc the heap figures are after a full collection.
  const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  try {
    for (let i = 0; i < WARMUP + CALLS; i++) {
      let started = nowMs();
      await bare.callTool({ name: 'read', arguments: {}, _meta: { idempotency_key: `b${i}` } });
      const bareElapsed = nowMs() - started;
      started = nowMs();
      const call = { call_id: `call_${i}`, name: 'mcp_bench_read', arguments: '{}' };
      const prepared = prepareCall(call, env);
      if (prepared.kind !== 'ready') throw new Error(JSON.stringify(prepared.result));
      const result = await executeCall(call, prepared.tool, prepared.input, env);
      const keelElapsed = nowMs() - started;
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      if (i >= WARMUP) {
        bareMs.push(bareElapsed);
        keelMs.push(keelElapsed);
      }
    }
  } finally {
    await bare.close();
    await sessions.closeAll();
  }
  collect();
  const heapAfter = process.memoryUsage().heapUsed;
  const window = (values: number[], from: number) => median(values.slice(from, from + 100));
  const added = keelMs.map((ms, i) => ms - (bareMs[i] as number));
  const rows = [
    [
      'bare SDK client',
      median(bareMs),
      percentile(bareMs, 0.99),
      window(bareMs, 0),
      window(bareMs, CALLS - 100),
    ],
    [
      'keel tool call',
      median(keelMs),
      percentile(keelMs, 0.99),
      window(keelMs, 0),
      window(keelMs, CALLS - 100),
    ],
    [
      'keel − bare (paired)',
      median(added),
      percentile(added, 0.99),
      window(added, 0),
      window(added, CALLS - 100),
    ],
  ];
  console.log(
    `\nmcp: ${CALLS} calls of one stdio tool, bare SDK client vs keel's tool path, interleaved\n`,
  );
  console.log(formatTable(['path', 'p50 ms', 'p99 ms', 'p50 first 100', `p50 last 100`], rows));
  const heapMb = (heapAfter - heapBefore) / 1_048_576;
  console.log(`\nheap change over the run: ${heapMb.toFixed(1)} MB`);
  console.log('targets: keel − bare p50 ≤ 1 ms; last 100 ≈ first 100 (no leak)');
  console.log(
    `wrote ${writeResult('mcp', {
      calls: CALLS,
      bare_ms_p50: median(bareMs),
      keel_ms_p50: median(keelMs),
      added_ms_p50: median(added),
      added_ms_p99: percentile(added, 0.99),
      added_ms_p50_first_100: window(added, 0),
      added_ms_p50_last_100: window(added, CALLS - 100),
      keel_ms_p50_first_100: window(keelMs, 0),
      keel_ms_p50_last_100: window(keelMs, CALLS - 100),
      heap_change_mb: heapMb,
    })}`,
  );
}
