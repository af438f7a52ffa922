// Preloaded (`--import`) into the benchmark's processes that run on Node 24 (KEEL_BENCH_NODES,
// bench/turns/node-runtimes.ts). keel's own node_modules hold better-sqlite3 built for the
// machine's Node 20 (another native ABI), and stay untouched; bench/node24/node_modules
// holds the same version built against Node 24's headers (`npm run bench:node24-install`).
// This sends the one specifier there; every other package still comes from keel's tree.
// Worker threads take the same `--import` from the process's execArgv.
import { registerHooks } from 'node:module';

const FROM = new URL('./package.json', import.meta.url).href;

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier !== 'better-sqlite3') return nextResolve(specifier, context);
    return nextResolve(specifier, { ...context, parentURL: FROM });
  },
});
