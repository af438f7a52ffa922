// scripts/bundle.mjs: what the build bundles `keel` with. A bundled module that finds
// files beside itself (import.meta.url) still finds them beside its original, wherever
// the tree is moved; a package that finds its own files at run time is refused by name
// unless reviewed; and `keel` runs the bundle when the build made one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bundle } from '../scripts/bundle.mjs';
import { builtFromTheseSources } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const IMPORT_WATCH = join(ROOT, 'test/helpers/import-watch.mjs');

describe('bundle', () => {
  const temp = mkdtempSync(join(tmpdir(), 'keel-bundle-'));
  after(() => rmSync(temp, { recursive: true, force: true }));

  function tree(name: string, files: Record<string, string>): string {
    const dir = join(temp, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  }

  it("a bundled module's import.meta.url still names its original place, after a move", async () => {
    const dir = tree('locate', {
      'dist/store/migrations/001.sql': 'CREATE TABLE t (x);\n',
      'dist/store/migrations.js':
        "import { readFileSync } from 'node:fs';\n" +
        "export const first = () => readFileSync(new URL('./migrations/001.sql', import.meta.url), 'utf8');\n",
      'dist/cli/main.js':
        "import { first } from '../store/migrations.js';\nprocess.stdout.write(first());\n",
    });
    const metafile = await bundle({
      entry: join(dir, 'dist/cli/main.js'),
      outdir: join(dir, 'dist/bundle'),
    });
    assert.ok(metafile, 'esbuild is installed (a devDependency)');
    // The bundle sits beside dist/: a copy of the whole tree elsewhere still works.
    const moved = join(temp, 'moved');
    cpSync(dir, moved, { recursive: true });
    rmSync(dir, { recursive: true });
    const run = spawnSync(process.execPath, [join(moved, 'dist/bundle/main.js')], {
      encoding: 'utf8',
    });
    assert.equal(run.stderr, '');
    assert.equal(run.stdout, 'CREATE TABLE t (x);\n');
  });

  it('refuses, by file, a package that may find its own files; a reviewed file passes', async () => {
    const dir = tree('refuse', {
      'node_modules/finds-itself/package.json': '{"name":"finds-itself","main":"index.js"}',
      'node_modules/finds-itself/index.js':
        "module.exports = require('node:path').join(__dirname, 'worker.js');\n",
      'dist/cli/main.js': "import where from 'finds-itself';\nconsole.log(where);\n",
    });
    await assert.rejects(
      bundle({ entry: join(dir, 'dist/cli/main.js'), outdir: join(dir, 'dist/bundle') }),
      /FINDS_OWN_FILES.*: finds-itself\/index\.js$/,
    );
    // undici/index.js is on the reviewed list: the same pattern there is let through.
    const reviewed = tree('reviewed', {
      'node_modules/undici/package.json': '{"name":"undici","main":"index.js"}',
      'node_modules/undici/index.js':
        "module.exports = typeof __filename !== 'undefined' ? __filename : 'bundled';\n",
      'dist/cli/main.js': "import where from 'undici';\nconsole.log(where);\n",
    });
    await bundle({
      entry: join(reviewed, 'dist/cli/main.js'),
      outdir: join(reviewed, 'dist/bundle'),
    });
    const run = spawnSync(process.execPath, [join(reviewed, 'dist/bundle/main.js')], {
      encoding: 'utf8',
    });
    assert.equal(run.stdout, 'bundled\n');
  });

  it('keel runs dist/bundle/main.js when the build made it', (t) => {
    if (!builtFromTheseSources()) {
      t.skip('dist/ is not built from these sources (keel runs src/ through tsx)');
      return;
    }
    assert.ok(existsSync(join(ROOT, 'dist/bundle/main.js')), 'the build bundled the CLI');
    const log = join(temp, 'imports.log');
    const run = spawnSync(process.execPath, ['bin/keel.js', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {
        ...process.env,
        NODE_OPTIONS: `--import ${IMPORT_WATCH}`,
        IMPORT_WATCH_LOG: log,
        IMPORT_WATCH_MATCH: '/main.js',
      },
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /usage: keel/);
    assert.deepEqual(
      readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((specifier) => specifier.replace(/^.*\/dist\//, 'dist/')),
      ['dist/bundle/main.js'],
    );
  });
});
