// Structured JSON logs (pino) on stderr; `--pretty` only changes how they are printed.

import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

export function createLogger(options: { level: string; pretty: boolean }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'keel' },
      redact: ['req.headers.authorization', '*.api_key', '*.token', 'headers.authorization'],
    },
    options.pretty
      ? pino.transport({ target: 'pino/file', options: { destination: 2 } })
      : pino.destination(2),
  );
}
