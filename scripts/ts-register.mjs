// `node --import ./scripts/ts-register.mjs file.ts`: runs TypeScript with the lean hooks
// of ts-hooks.mjs (why not tsx there). run-tests.mjs starts the test processes with it.
// KEEL_TS_CACHE names another cache directory (the runner's own test uses a temp one).
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';

// The compiled files carry inline source maps; this makes stack traces use them.
process.setSourceMapsEnabled(true);
register(new URL('./ts-hooks.mjs', import.meta.url), {
  data: {
    cache:
      process.env.KEEL_TS_CACHE ??
      fileURLToPath(new URL('../node_modules/.cache/keel/ts/', import.meta.url)),
    tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
  },
});
