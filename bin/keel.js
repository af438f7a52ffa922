#!/usr/bin/env node
// The `keel` command. Runs the compiled CLI in dist/ (scripts/build.mjs, run by
// `npm install` through `prepare`) when that build is newer than every source file;
// otherwise — a checkout without a build, an edited checkout, or KEEL_FROM_SOURCE=1 —
// registers tsx in this same process (no child process, so signals reach keel itself)
// and runs the TypeScript sources. Stale JavaScript is never run.
import { readdirSync, statSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const stamp = new URL('dist/.build-stamp', root);

function builtAt() {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return null;
  }
}

function newestSource() {
  let newest = 0;
  const src = new URL('src/', root);
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const modified = statSync(`${entry.parentPath ?? entry.path}/${entry.name}`).mtimeMs;
    if (modified > newest) newest = modified;
  }
  return newest;
}

const built = process.env.KEEL_FROM_SOURCE === '1' ? null : builtAt();
if (built !== null && newestSource() <= built) {
  await import('../dist/cli/main.js');
} else {
  if (built !== null)
    process.stderr.write('keel: dist/ is older than src/, running from source (npm run build)\n');
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
