// A finished file put in place under its final name without ever replacing one that is
// there (`keel backup`, `keel export`: both write under a temporary name first). A look
// then a rename would replace a file that appeared in between; link fails on an existing
// name in the same step that creates it.

import { existsSync, linkSync, renameSync, rmSync } from 'node:fs';

/**
 * Gives `partial` the name `to` and drops the temporary name; throws `refuse()` when `to`
 * exists (`partial` then stays, for the caller to remove). A filesystem without hard
 * links gets a rename after one more look.
 */
export function publishNewFile(partial: string, to: string, refuse: () => Error): void {
  try {
    linkSync(partial, to);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EEXIST') throw refuse();
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    if (existsSync(to)) throw refuse();
    renameSync(partial, to);
    return;
  }
  rmSync(partial);
}
