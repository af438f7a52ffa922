// The stream-latency bench's load generator, its own process so its CPU and event loop are
// never the server's: prepares (threads), runs the warm-up, prints "ready"; then for each
// "go" line on stdin starts `runs` streaming runs at once (protocols.ts) and prints one
// JSON line with every run's time to the first token and to the final answer; exits on
// "end" or when stdin closes.

import { createInterface } from 'node:readline';
import { Agent } from 'undici';
import { STREAM_PROTOCOLS, type StreamSpec, type StreamTiming } from './protocols.ts';

const spec = JSON.parse(process.argv[2] ?? '{}') as StreamSpec;
const dispatcher = new Agent({
  // Every run holds a connection for its whole stream (keel: the submit's is freed first).
  connections: spec.runs + spec.warmupInflight + 16,
  keepAliveTimeout: 1000,
  keepAliveMaxTimeout: 1000,
  headersTimeout: 300_000,
  bodyTimeout: 300_000,
});
const protocol = STREAM_PROTOCOLS[spec.kind];
const state = await protocol.prepare(spec, dispatcher);

let index = 0;
/** Starts `count` runs at once; each on a fresh conversation. */
async function burst(count: number, phase: string): Promise<(StreamTiming | string)[]> {
  const slots = Array.from({ length: count }, () => {
    const slot = { index, name: `${phase}-${index}` };
    index += 1;
    return slot;
  });
  return Promise.all(
    slots.map(async (slot) => {
      const started = performance.now();
      try {
        return await protocol.run(spec, dispatcher, state, slot, started);
      } catch (error) {
        return String(error).slice(0, 500);
      }
    }),
  );
}

for (let done = 0; done < spec.warmup; done += spec.warmupInflight) {
  const failed = (await burst(Math.min(spec.warmupInflight, spec.warmup - done), 'warmup')).filter(
    (result) => typeof result === 'string',
  );
  if (failed.length > 0) {
    process.stderr.write(`warm-up failed: ${failed[0]}\n`);
    process.exit(1);
  }
}
process.stdout.write('ready\n');

const lines = createInterface({ input: process.stdin });
let bursts = 0;
for await (const line of lines) {
  if (line.trim() !== 'go' || bursts >= spec.bursts) break;
  bursts += 1;
  const started = performance.now();
  const results = await burst(spec.runs, 'measured');
  const timings = results.filter((result): result is StreamTiming => typeof result !== 'string');
  const errors = results.filter((result): result is string => typeof result === 'string');
  process.stdout.write(
    `${JSON.stringify({
      first: timings.map((timing) => timing.firstMs),
      final: timings.map((timing) => timing.finalMs),
      errors: errors.length,
      error: errors[0] ?? null,
      seconds: (performance.now() - started) / 1000,
    })}\n`,
  );
}
await dispatcher.close();
process.exit(0);
