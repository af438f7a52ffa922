// The turn benchmark's load generator, run as its own process (bench/turns/run.ts) so its
// CPU is never counted as the server's: `turns` turns over `scopes` scopes, `inflight` at
// once, each turn the contender's own request shape (protocols.ts). Prints one JSON line:
// per-turn latencies (ms) and the wall time of the whole load.

import { Agent } from 'undici';
import { PROTOCOLS, type LoadSpec } from './protocols.ts';

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
// Idle sockets are dropped well before a server's own keep-alive timeout (Node's: 5 s),
// so a request never goes out on a socket the server is closing.
const dispatcher = new Agent({
  connections: spec.inflight,
  keepAliveTimeout: 1000,
  keepAliveMaxTimeout: 1000,
});
const protocol = PROTOCOLS[spec.kind];
const state = await protocol.prepare(spec, dispatcher);
// Warm-up: every contender loads code lazily (keel its model provider and tokenizer, the
// peers their graphs and storage) and V8 compiles its hot paths during the first turns;
// a steady-state server is what is compared. These turns have scopes of their own, so
// the measured turns find the same fresh conversations as without a warm-up.
for (let index = 0; index < spec.warmup; index += spec.inflight) {
  const batch = Math.min(spec.inflight, spec.warmup - index);
  await Promise.all(
    Array.from({ length: batch }, (_, offset) =>
      protocol.turn(spec, dispatcher, state, index + offset, 'warmup'),
    ),
  );
}
// Setup and warm-up are not measured: the runner samples /proc, then says "go".
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));

const latencies: number[] = [];
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: spec.inflight }, async () => {
    while (next < spec.turns) {
      const index = next++;
      const begun = performance.now();
      await protocol.turn(spec, dispatcher, state, index, 'measured');
      latencies.push(performance.now() - begun);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
await dispatcher.close();
process.stdout.write(`${JSON.stringify({ latencies, seconds })}\n`);
process.stdin.destroy();
