// Loaded with NODE_OPTIONS="--import <this file>": every module specifier that contains
// $IMPORT_WATCH_MATCH (default "@opentelemetry") is appended to $IMPORT_WATCH_LOG, so a
// test can check what a process imported — that it never imported the SDK
// (test/telemetry-otlp.test.ts), or that `keel` ran its bundle (test/bundle.test.ts).
import { register } from 'node:module';

if (process.env.IMPORT_WATCH_LOG) {
  register(new URL('./import-watch-hooks.mjs', import.meta.url), {
    data: {
      log: process.env.IMPORT_WATCH_LOG,
      match: process.env.IMPORT_WATCH_MATCH ?? '@opentelemetry',
    },
  });
}
