// The resolve hook of import-watch.mjs (runs on the loader thread).
import { appendFileSync } from 'node:fs';

let log = null;

export function initialize(data) {
  log = data.log;
}

export async function resolve(specifier, context, next) {
  if (log && specifier.includes('@opentelemetry')) appendFileSync(log, `${specifier}\n`);
  return next(specifier, context);
}
