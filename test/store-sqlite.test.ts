// The store conformance suite on SQLite files in fresh temp dirs.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { StoreFactory } from './store-conformance/index.ts';
import { defineStoreConformance } from './store-conformance/index.ts';
import type { SqliteStore } from '../src/store/sqlite/index.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Store } from '../src/store/store.ts';

function sqliteFactory(): StoreFactory {
  const root = mkdtempSync(join(os.tmpdir(), 'keel-store-conformance-'));
  let databases = 0;
  const pathOf = (store: Store): string => (store as SqliteStore).path;
  return {
    async open(options = {}) {
      databases += 1;
      const dir = join(root, `db-${databases}`);
      return openSqliteStore({ path: join(dir, 'keel.db'), durability: 'full', ...options });
    },
    async openPeer(primary, options = {}) {
      return openSqliteStore({
        path: pathOf(primary),
        durability: 'full',
        exclusiveLock: false,
        ...options,
      });
    },
    async reopen(closed, options = {}) {
      return openSqliteStore({ path: pathOf(closed), durability: 'full', ...options });
    },
    async cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

defineStoreConformance('sqlite', sqliteFactory());
