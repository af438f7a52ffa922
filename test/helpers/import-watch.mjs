// Loaded with NODE_OPTIONS="--import <this file>" by test/telemetry-otlp.test.ts: every
// module specifier that names @opentelemetry is appended to $IMPORT_WATCH_LOG, so a test
// can check that a process never imported the SDK.
import { register } from 'node:module';

if (process.env.IMPORT_WATCH_LOG) {
  register(new URL('./import-watch-hooks.mjs', import.meta.url), {
    data: { log: process.env.IMPORT_WATCH_LOG },
  });
}
