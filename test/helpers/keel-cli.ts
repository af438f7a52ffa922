// How tests start the `keel` command as a child process (cwd: the repository root):
// `bin/keel.js` when dist/ was built from exactly these sources — what an installed keel
// runs, about 0.5 s less CPU per command and 1.5 s per `keel serve` than compiling
// src/ through tsx — else src/cli/main.ts through tsx. That is the choice bin/keel.js
// makes itself, made here first so an edited checkout runs the sources without the
// "dist/ is older than src/" notice on stderr. Prefix node's own flags before these.
//
//   spawn(process.execPath, [...KEEL_CLI, 'runs', 'list'], { cwd: ROOT })

import { readFileSync } from 'node:fs';
import { sourceDigest } from '../../bin/source-digest.js';

const ROOT = new URL('../..', import.meta.url).pathname;

/** dist/.build-stamp records the digest src/ has now (hashed once per test process). */
export function builtFromTheseSources(): boolean {
  built ??= builtFrom(`${ROOT}src`);
  return built;
}
let built: boolean | undefined;

/** The checkout's dist/.build-stamp records the digest the sources under `src` have. */
export function builtFrom(src: string): boolean {
  let stamp: string;
  try {
    stamp = readFileSync(`${ROOT}dist/.build-stamp`, 'utf8');
  } catch {
    return false;
  }
  const recorded = /^sources (\S+)$/m.exec(stamp)?.[1];
  return recorded !== undefined && recorded === sourceDigest(src);
}

export const KEEL_CLI: readonly string[] = builtFromTheseSources()
  ? ['bin/keel.js']
  : ['--import', 'tsx', 'src/cli/main.ts'];
