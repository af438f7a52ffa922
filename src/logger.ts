// Structured JSON logs (pino) on stderr; `--pretty` only changes how they are printed:
// pino-pretty in pino's transport worker (coloured when stderr is a terminal).

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
      ? pino.transport({
          target: 'pino-pretty',
          options: {
            destination: 2,
            colorize: process.stderr.isTTY === true,
            translateTime: 'SYS:HH:MM:ss.l',
            ignore: 'pid,hostname,service',
            singleLine: true,
          },
        })
      : pino.destination(2),
  );
}
