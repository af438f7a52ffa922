// The store conformance suite on SQLite files in fresh temp dirs.

import { defineStoreConformance } from './store-conformance/index.ts';
import { sqliteFactory } from './helpers/store-factories.ts';

defineStoreConformance('sqlite', sqliteFactory());
