#!/usr/bin/env node
// The `keel` command. Runs the compiled CLI in dist/ (scripts/build.mjs, run by
// `npm install` through `prepare`) when that build is newer than every source file, or
// when src/ still has the digest the build recorded (an installed package: unpacking
// gives files new times); otherwise — a checkout without a build, an edited checkout, or
// KEEL_FROM_SOURCE=1 — registers tsx in this same process (no child process, so signals
// reach keel itself) and runs the TypeScript sources. Stale JavaScript is never run.
import { existsSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';

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

/** The sources are those the build compiled (same digest); the stamp is touched so the
 * next start takes the quick path (when this user may write it). */
async function sameSources() {
  const recorded = /^sources (\S+)$/m.exec(readFileSync(stamp, 'utf8'))?.[1];
  if (!recorded) return false;
  const { sourceDigest } = await import('./source-digest.js');
  if (sourceDigest(new URL('src/', root).pathname) !== recorded) return false;
  try {
    const now = new Date();
    utimesSync(stamp, now, now);
  } catch {
    // a read-only install: the digest is checked again next start (tens of ms)
  }
  return true;
}

const built = process.env.KEEL_FROM_SOURCE === '1' ? null : builtAt();
if (built !== null && (newestSource() <= built || (await sameSources()))) {
  // The bundle of dist/'s modules (scripts/bundle.mjs) starts in about half the CPU; a
  // build without esbuild has only the modules.
  const bundled = new URL('dist/bundle/main.js', root);
  await import(existsSync(bundled) ? bundled.href : '../dist/cli/main.js');
} else {
  if (built !== null)
    process.stderr.write('keel: dist/ is older than src/, running from source (npm run build)\n');
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
