// `node --import ./scripts/ts-register.mjs file.ts`: runs TypeScript with the lean hooks
// of ts-hooks.mjs (why not tsx there). run-tests.mjs starts the test processes with it.
import { register } from 'node:module';

// The compiled files carry inline source maps; this makes stack traces use them.
process.setSourceMapsEnabled(true);
register(new URL('./ts-hooks.mjs', import.meta.url), {
  data: { cache: new URL('../node_modules/.cache/keel/ts/', import.meta.url).pathname },
});
