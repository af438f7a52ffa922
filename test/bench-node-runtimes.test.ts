// The turn benchmark's choice of Node per contender (bench/turns/node-runtimes.ts) and
// the Node 24 tree of `npm run bench:node24-install` (bench/node24/): KEEL_BENCH_NODES is
// read as documented, and Node 24 loads the better-sqlite3 built for it, not keel's.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { RUNNING_NODE, nodeCommandFor, parseBenchNodes } from '../bench/turns/node-runtimes.ts';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const RUNNING_MAJOR = Number(process.versions.node.split('.')[0]);
const readJson = (path: string): { dependencies: Record<string, string> } =>
  JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { dependencies: Record<string, string> };

describe('KEEL_BENCH_NODES', () => {
  it('unset or empty: the running Node, names unsuffixed', () => {
    for (const value of [undefined, '', ' , ']) {
      const nodes = parseBenchNodes(value);
      assert.deepEqual(nodes, [RUNNING_NODE]);
      assert.equal(nodes[0]?.suffix, '');
      assert.equal(nodes[0]?.command, process.execPath);
    }
  });

  it("the running Node's major: that binary, suffixed", () => {
    const [node] = parseBenchNodes(`${RUNNING_MAJOR}`);
    assert.equal(node?.command, process.execPath);
    assert.equal(node?.suffix, `@node${RUNNING_MAJOR}`);
    assert.equal(node?.version, process.versions.node);
    assert.deepEqual(node?.flags, []);
  });

  it('refuses what is not a major version, or a Node it cannot find', () => {
    assert.throws(() => parseBenchNodes('twenty'), /"twenty" is not a Node major version/);
    assert.throws(() => parseBenchNodes('1.5'), /not a Node major version/);
    const absent = RUNNING_MAJOR === 19 ? 17 : 19;
    assert.throws(() => parseBenchNodes(`${absent}`), new RegExp(`no Node ${absent} here`));
  });

  it('puts the runtime flags before the script', () => {
    const node = { ...RUNNING_NODE, flags: ['--import', '/x/hook.mjs'] };
    assert.deepEqual(nodeCommandFor(node, ['script.js', 'serve']), [
      process.execPath,
      ['--import', '/x/hook.mjs', 'script.js', 'serve'],
    ]);
  });
});

describe('bench/node24', () => {
  it("pins keel's better-sqlite3 version", () => {
    assert.equal(
      readJson('bench/node24/package.json').dependencies['better-sqlite3'],
      readJson('package.json').dependencies['better-sqlite3'],
    );
  });

  const installed = existsSync(join(ROOT, 'bench/node24/node_modules/better-sqlite3/build'));
  it(
    'Node 24 opens a SQLite database with the addon built for it (after bench:node24-install)',
    { skip: installed ? false : 'bench/node24 is not installed: npm run bench:node24-install' },
    () => {
      const [node] = parseBenchNodes('24');
      assert.ok(node);
      const script = [
        "import Database from 'better-sqlite3';",
        "const db = new Database(':memory:');",
        "db.prepare('create table t (x)').run();",
        "db.prepare('insert into t values (?)').run(7);",
        "const { x } = db.prepare('select x from t').get();",
        "const from = import.meta.resolve('better-sqlite3');",
        'console.log(JSON.stringify({ x, abi: process.versions.modules, from }));',
      ].join('\n');
      const [command, args] = nodeCommandFor(node, ['--input-type=module', '-e', script]);
      const result = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      const seen = JSON.parse(result.stdout) as { x: number; abi: string; from: string };
      assert.equal(seen.x, 7);
      assert.equal(seen.abi, '137');
      assert.match(seen.from, /\/bench\/node24\/node_modules\/better-sqlite3\//);
    },
  );
});
