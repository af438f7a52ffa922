// The crash tests' test entry runs keel's compiled modules when dist/ is current
// (test/helpers/keel-test-serve-entry.ts): no tsx in the child, and the compiled test
// helpers are bundled with dist/'s modules — one copy, so `instanceof KeelError` holds.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import type { Metafile } from 'esbuild';
import { builtFromTheseSources } from './helpers/keel-cli.ts';
import { KEEL_TEST_SERVE } from './helpers/keel-test-serve-entry.ts';

describe('test entry (keel-test-serve)', () => {
  it('runs from dist/ without tsx when dist/ is current, else the .ts entry through tsx', (t) => {
    if (!builtFromTheseSources()) {
      assert.deepEqual(KEEL_TEST_SERVE, ['--import', 'tsx', 'test/helpers/keel-test-serve.ts']);
      t.skip('dist/ is not built from these sources');
      return;
    }
    assert.equal(KEEL_TEST_SERVE.length, 1);
    const [entry = ''] = KEEL_TEST_SERVE;
    assert.match(
      entry,
      /node_modules\/\.cache\/keel\/test-serve-\w+\/bundle\/keel-test-serve\.js$/,
    );
    // The bundle (scripts/bundle.mjs) holds keel's compiled modules and the helpers, each
    // once: no input is a .ts file or under src/ (the helpers' `src` link leads to dist/),
    // dist/errors.js went in, and what the outputs import from outside the bundle is
    // packages and Node's own modules only — never a file, which would be a second copy.
    const metafile = JSON.parse(
      readFileSync(join(dirname(dirname(entry)), 'metafile.json'), 'utf8'),
    ) as Metafile;
    const inputs = Object.keys(metafile.inputs);
    assert.deepEqual(
      inputs.filter((input) => input.endsWith('.ts') || input.startsWith('src/')),
      [],
    );
    assert.ok(inputs.includes('dist/errors.js'));
    assert.ok(inputs.some((input) => input.endsWith('test/helpers/effect-sink-tools.js')));
    assert.ok(inputs.filter((input) => input.startsWith('dist/')).length >= 100);
    for (const [output, { imports }] of Object.entries(metafile.outputs)) {
      for (const { path, external } of imports) {
        if (external) assert.match(path, /^(node:)?[@a-z]/, `${output} imports ${path}`);
        else assert.match(path, /\/bundle\/chunk-\w+\.js$/, `${output} imports ${path}`);
      }
    }
  });
});
