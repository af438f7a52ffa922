// The crash tests' test entry runs keel's compiled modules when dist/ is current
// (test/helpers/keel-test-serve-entry.ts): no tsx in the child, and the compiled test
// helpers import exactly dist/'s modules — one copy, so `instanceof KeelError` holds.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { builtFromTheseSources } from './helpers/keel-cli.ts';
import { KEEL_TEST_SERVE } from './helpers/keel-test-serve-entry.ts';

const ROOT = new URL('..', import.meta.url).pathname;

describe('test entry (keel-test-serve)', () => {
  it('runs from dist/ without tsx when dist/ is current, else the .ts entry through tsx', (t) => {
    if (!builtFromTheseSources()) {
      assert.deepEqual(KEEL_TEST_SERVE, ['--import', 'tsx', 'test/helpers/keel-test-serve.ts']);
      t.skip('dist/ is not built from these sources');
      return;
    }
    assert.equal(KEEL_TEST_SERVE.length, 1);
    const [entry = ''] = KEEL_TEST_SERVE;
    assert.match(entry, /node_modules\/\.cache\/keel\/test-serve-\w+\/.*keel-test-serve\.js$/);
    const helpers = dirname(entry);
    let keelImports = 0;
    for (const name of readdirSync(helpers)) {
      const code = readFileSync(join(helpers, name), 'utf8');
      assert.doesNotMatch(code, /from ["'][^"']*\.ts["']/, `${name} imports a .ts module`);
      for (const [, specifier = ''] of code.matchAll(/from ["'](\.\.\/\.\.\/src\/[^"']+)["']/g)) {
        const target = realpathSync(resolve(helpers, specifier));
        assert.ok(target.startsWith(realpathSync(join(ROOT, 'dist'))), `${specifier} → ${target}`);
        keelImports++;
      }
    }
    assert.ok(keelImports >= 5, `only ${keelImports} imports of keel's modules`);
  });
});
