// `keel serve` for tests that break keel on purpose — the one place that turns the
// test-only env vars into fault points, seeded bugs (store and journal wrappers,
// seeded-bugs.ts) and test tools. The production entry
// (src/cli/main.ts) refuses these vars (config.ts, TEST_ONLY_ENV); this entry reads them,
// removes them from the environment the config sees, and injects what they name.
//
//   KEEL_TEST_FAILPOINTS=1 + KEEL_FAILPOINTS="name=action;…"   fault points
//   KEEL_TEST_SEEDED_BUGS="a,b"                                seeded bugs (unknown refused)
//   KEEL_TEST_EFFECT_SINK_URL=http://127.0.0.1:PORT            the effect sink's tools
//   KEEL_TEST_FAILPOINTS_STDIN=1 (with KEEL_TEST_FAILPOINTS=1)  a stdin line `arm <spec>`
//     replaces the fault points by <spec> (hits counted from then on), answered on stdout
//     with `failpoints armed: <spec>` (crash-harness.ts, serve(…, { armable: true }))
//
// Usage: node --import tsx test/helpers/keel-test-serve.ts [keel serve flags]

import { createInterface } from 'node:readline';
import { exitCodeFor } from '../../src/cli/errors.ts';
import { serveCommand } from '../../src/cli/serve.ts';
import { TEST_ONLY_ENV } from '../../src/config.ts';
import { createFailpoints } from '../../src/failpoints.ts';
import { effectSinkTools } from './effect-sink-tools.ts';
import { parseSeededBugs, seededBugOptions } from './seeded-bugs.ts';

async function main(): Promise<number> {
  const env = { ...process.env };
  for (const name of TEST_ONLY_ENV) delete process.env[name];
  const enabled = env.KEEL_TEST_FAILPOINTS === '1';
  let failpoints = createFailpoints({ enabled, spec: env.KEEL_FAILPOINTS ?? '' });
  if (enabled && env.KEEL_TEST_FAILPOINTS_STDIN === '1') {
    createInterface({ input: process.stdin }).on('line', (line) => {
      if (!line.startsWith('arm ')) return;
      const spec = line.slice('arm '.length);
      failpoints = createFailpoints({ enabled, spec });
      process.stdout.write(`failpoints armed: ${spec}\n`);
    });
  }
  try {
    const injectedFailpoints = { hit: (name: string) => failpoints.hit(name) };
    const bugs = parseSeededBugs(env.KEEL_TEST_SEEDED_BUGS ?? '');
    return await serveCommand(process.argv.slice(2), {
      failpoints: injectedFailpoints,
      ...seededBugOptions(bugs, injectedFailpoints),
      extraTools: env.KEEL_TEST_EFFECT_SINK_URL
        ? effectSinkTools(env.KEEL_TEST_EFFECT_SINK_URL)
        : [],
    });
  } catch (error) {
    return exitCodeFor(error, (line) => process.stderr.write(`${line}\n`));
  }
}

process.exit(await main());
