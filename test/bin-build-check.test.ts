// bin/keel.js chooses between the build (dist/) and the sources (src/ through tsx): the
// build when its stamp is newer than every source, or when src/ still has the digest the
// build recorded (an installed package, whose files got new times when unpacked); the
// sources when a file was edited after the build, or the stamp records no digest. Run on
// a small stand-in tree: bin/ copied, a dist/ and a src/ whose main modules say which ran.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { sourceDigest } from '../bin/source-digest.js';

const ROOT = new URL('..', import.meta.url).pathname;
const tree = mkdtempSync(join(tmpdir(), 'keel-bin-'));
after(() => rmSync(tree, { recursive: true, force: true }));

function file(path: string, text: string, at?: Date): void {
  mkdirSync(join(tree, path, '..'), { recursive: true });
  writeFileSync(join(tree, path), text);
  if (at) utimesSync(join(tree, path), at, at);
}

/** What bin/keel.js ran: "dist" or "src". */
function run(): string {
  return execFileSync(process.execPath, [join(tree, 'bin/keel.js')], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

it('runs dist/ when it is newer or built from the same sources, src/ when edited', () => {
  mkdirSync(join(tree, 'bin'));
  for (const name of ['keel.js', 'source-digest.js'])
    copyFileSync(join(ROOT, 'bin', name), join(tree, 'bin', name));
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  writeFileSync(join(tree, 'package.json'), '{"type":"module"}\n');
  const past = new Date(Date.now() - 60_000);
  file('src/cli/main.ts', "console.log('src' as string);\n", past);
  file('src/cli/other.ts', 'export const x = 1;\n', past);
  file('dist/cli/main.js', "console.log('dist');\n");
  const stamp = (digest: string | null) =>
    file('dist/.build-stamp', `2026-01-01T00:00:00.000Z\n${digest ? `sources ${digest}\n` : ''}`);
  stamp(sourceDigest(join(tree, 'src')));

  assert.equal(run(), 'dist', 'the build is newer than every source');

  // Unpacked: a source looks newer than the build, its content unchanged.
  const future = new Date(Date.now() + 60_000);
  utimesSync(join(tree, 'src/cli/other.ts'), future, future);
  assert.equal(run(), 'dist', 'same digest: the build');
  assert.ok(
    statSync(join(tree, 'dist/.build-stamp')).mtimeMs >= Date.now() - 10_000,
    'the stamp was touched, so the next start takes the quick path',
  );

  // Edited after the build: the sources run, never the stale build.
  file('src/cli/other.ts', 'export const x = 2;\n', new Date(Date.now() + 120_000));
  assert.equal(run(), 'src');

  // A stamp from before digests: times alone decide, as before.
  file('src/cli/other.ts', 'export const x = 1;\n', new Date(Date.now() + 180_000));
  stamp(null);
  assert.equal(run(), 'src');
});
