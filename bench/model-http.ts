// `npm run bench -- model-http`: what one streamed model call costs keel's side of the
// wire, by HTTP client (issue 21: undici vs node:http keep-alive agents). Each client
// runs in its own process (bench/model-http/client.ts) against the same `keel
// fixture-model` server; client kinds are interleaved over rounds, medians reported.
//   fetch           the global fetch (undici) with a web-stream body: the AI SDK's default
//   http            node:http with a keep-alive agent, the body read as a Node stream
//   keel-transport  keel's transport (src/providers/node-http-transport.ts): the same
//                   wrapped as a fetch Response (Readable.toWeb), body read
//   keel-provider   keel's whole model call: the AI SDK package over that transport, the
//                   trace recording, every built-in tool offered (a turn's model call)
//   keel-provider-unstreamed  the same with the provider's `stream = false`

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { formatTable, median, writeResult } from './support.ts';
import { startFixtureModel } from './turns/contenders.ts';
import { stopChild } from './turns/children.ts';

const CLIENT = fileURLToPath(new URL('./model-http/client.ts', import.meta.url));
const KINDS = [
  'fetch',
  'http',
  'keel-transport',
  'keel-provider',
  'keel-provider-unstreamed',
] as const;
const CALLS = 2000;
const INFLIGHT = 16;
const WARMUP = 200;
const ROUNDS = 3;

export async function runModelHttpBench(): Promise<void> {
  const model = await startFixtureModel();
  const measured = new Map<string, { cpuMs: number; seconds: number }[]>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of KINDS) {
        const child = spawnSync(
          process.execPath,
          [
            '--import',
            'tsx',
            CLIENT,
            kind,
            model.ready,
            String(CALLS),
            String(INFLIGHT),
            String(WARMUP),
          ],
          { encoding: 'utf8' },
        );
        const line = child.stdout.split('\n').find((text) => text.startsWith('{'));
        if (child.status !== 0 || !line) throw new Error(`${kind}: ${child.stderr}`);
        measured.set(kind, [...(measured.get(kind) ?? []), JSON.parse(line)]);
      }
    }
  } finally {
    await stopChild(model);
  }
  const rows = KINDS.map((kind) => {
    const runs = measured.get(kind) ?? [];
    const cpuUs = median(runs.map((run) => (run.cpuMs * 1000) / CALLS));
    const perSecond = median(runs.map((run) => CALLS / run.seconds));
    return { kind, cpuUsPerCall: cpuUs, callsPerSecond: perSecond };
  });
  const fetchCpu = rows[0]?.cpuUsPerCall ?? 1;
  console.log(
    `\nmodel-http: ${CALLS} chat completions (streamed but the unstreamed row), ${INFLIGHT} in flight, after ${WARMUP} warm-up calls; client CPU per call (medians of ${ROUNDS} rounds)\n`,
  );
  console.log(
    formatTable(
      ['client', 'client CPU µs/call', 'vs fetch', 'calls/s'],
      rows.map((row) => [
        row.kind,
        row.cpuUsPerCall.toFixed(0),
        (row.cpuUsPerCall / fetchCpu).toFixed(2),
        row.callsPerSecond.toFixed(0),
      ]),
    ),
  );
  console.log(`wrote ${writeResult('model-http', { calls: CALLS, inflight: INFLIGHT, rows })}`);
}
