// Not a command: the digest of src/ that scripts/build.mjs writes into dist/.build-stamp
// and bin/keel.js compares when src/ looks newer than the build. File times alone cannot
// tell: `npm install` of a packed keel gives every file the time it was unpacked, so
// some of src/ is "newer" than an untouched build.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** sha256 over every file under `src` (path and bytes), in a fixed order. */
export function sourceDigest(src) {
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${relative(src, file)}\0`);
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return `sha256:${hash.digest('hex')}`;
}
