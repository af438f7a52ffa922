// A fresh copy of the repository as `git clone` would give it (tracked and untracked but
// not ignored files: git ls-files), with the checkout's node_modules linked in place of
// `npm install`; and the checkout's build copied into it when that build was made from
// exactly the copy's sources. For the tests that walk what a new user does
// (readme-walk.test.ts, global-install.test.ts).

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { builtFrom } from './keel-cli.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** Copies the checkout's files into `dest` and links its node_modules there. */
export function copyCheckout(dest: string): void {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  for (const file of files.split('\n').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dest, file));
  }
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dest, 'node_modules'));
}

/**
 * Copies the checkout's dist/ into the copy when its build stamp records the digest of
 * the copy's src/ — the very output `npm run build` (`prepare`) would write there, which
 * the install that made the checkout's node_modules already ran (a fresh clone's
 * `npm ci`, CI's first step). True when copied; false when the copy must build itself.
 */
export function copyCurrentBuild(dest: string): boolean {
  if (!builtFrom(join(dest, 'src'))) return false;
  cpSync(join(ROOT, 'dist'), join(dest, 'dist'), { recursive: true });
  return true;
}
