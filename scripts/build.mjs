// `npm run build` (and `prepare`, so `npm install` / `npm ci` run it): compiles src/ to
// dist/ with tsc (tsconfig.build.json), copies the files tsc does not emit (SQL
// migrations, the SQLite read worker) beside the compiled modules, then writes
// dist/.build-stamp last, with the digest of src/ it was built from. bin/keel.js runs
// dist/ only when that stamp is newer than every file under src/ or src/ still has that
// digest, so an edited checkout never runs stale JavaScript.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { sourceDigest } from '../bin/source-digest.js';
import { bundle } from './bundle.mjs';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  // `npm install --omit=dev`: no compiler; bin/keel.js runs the sources through tsx.
  console.error('build: typescript is not installed; keel will run from src/ through tsx');
  process.exit(0);
}

// Taken before compiling: a source edited during the build makes the digest mismatch.
const sources = sourceDigest(join(root, 'src'));
rmSync(dist, { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) {
  rmSync(dist, { recursive: true, force: true });
  console.error('build: tsc failed; dist/ removed (bin/keel.js falls back to src/)');
  process.exit(result.status ?? 1);
}
cpSync(join(root, 'src'), dist, {
  recursive: true,
  filter: (source) => !source.endsWith('.ts'),
});
if (!existsSync(join(dist, 'cli', 'main.js'))) {
  console.error('build: dist/cli/main.js is missing after tsc');
  process.exit(1);
}
// The CLI bundled (scripts/bundle.mjs): bin/keel.js runs dist/bundle/main.js when it is
// there, dist/cli/main.js otherwise.
try {
  await bundle({ entry: join(dist, 'cli', 'main.js'), outdir: join(dist, 'bundle') });
} catch (error) {
  rmSync(dist, { recursive: true, force: true });
  console.error(`build: ${error.message}; dist/ removed (bin/keel.js falls back to src/)`);
  process.exit(1);
}
writeFileSync(join(dist, '.build-stamp'), `${new Date().toISOString()}\nsources ${sources}\n`);
console.error('build: dist/ ready');
