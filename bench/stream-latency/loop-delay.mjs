// Preloaded into every server of the stream-latency bench (`node --import <this file>`),
// keel and the peers alike, so their event-loop delay is measured the same way:
// perf_hooks.monitorEventLoopDelay at 10 ms resolution (figures are the delay beyond it). On SIGUSR2 it writes what it saw
// since the last SIGUSR2 (or start) to the file named by BENCH_LOOP_DELAY_FILE, as one
// JSON line with a sequence number, and starts over. Plain JavaScript, no imports of the
// server's code: it must load under any server and any Node release.

import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_LOOP_DELAY_FILE;
if (file) {
  const RESOLUTION_MS = 10;
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let sequence = 0;
  // The histogram holds the intervals between the sampling timer's runs, the 10 ms it
  // waits included: the delay is what exceeds it.
  const ms = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  process.on('SIGUSR2', () => {
    sequence += 1;
    const figures = {
      sequence,
      count: histogram.count,
      p50_ms: ms(histogram.percentile(50)),
      p99_ms: ms(histogram.percentile(99)),
      max_ms: ms(histogram.max),
    };
    histogram.reset();
    writeFileSync(file, `${JSON.stringify(figures)}\n`);
  });
}
