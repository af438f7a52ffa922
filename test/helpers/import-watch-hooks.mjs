// The resolve hook of import-watch.mjs (runs on the loader thread).
import { appendFileSync } from 'node:fs';

let log = null;
let match = '@opentelemetry';

export function initialize(data) {
  log = data.log;
  match = data.match;
}

export async function resolve(specifier, context, next) {
  if (log && specifier.includes(match)) appendFileSync(log, `${specifier}\n`);
  return next(specifier, context);
}
