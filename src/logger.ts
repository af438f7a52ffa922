// Structured JSON logs (pino) on stderr, buffered (bufferedStderr); `--pretty` only
// changes how they are printed: pino-pretty in pino's transport worker (coloured when
// stderr is a terminal).

import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/** A logger keel made for itself, and how to write out what it still buffers. */
export interface OwnLogger {
  logger: Logger;
  /** Writes out buffered lines and stops the flush timer (keel's stop). */
  close(): void;
}

export function createLogger(options: { level: string; pretty: boolean }): OwnLogger {
  const redact = ['req.headers.authorization', '*.api_key', '*.token', 'headers.authorization'];
  const settings = { level: options.level, base: { service: 'keel' }, redact };
  if (options.pretty) {
    const transport = pino.transport({
      target: 'pino-pretty',
      options: {
        destination: 2,
        colorize: process.stderr.isTTY === true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,service',
        singleLine: true,
      },
    });
    return { logger: pino(settings, transport), close: () => undefined };
  }
  const stderr = bufferedStderr();
  return { logger: pino(settings, stderr.destination), close: stderr.close };
}

/** How long a log line may wait in the buffer before it is written. */
const LOG_FLUSH_MS = 200;

/**
 * stderr through a 4 KiB buffer, written when full, every LOG_FLUSH_MS and at exit:
 * a write system call per line cost ~15 % of the CPU of a turn (two lines per turn at
 * info). What a SIGKILL can lose is at most the last LOG_FLUSH_MS of lines; the record
 * of what happened is the journal, which is never buffered like this.
 */
function bufferedStderr(): { destination: pino.DestinationStream; close(): void } {
  const destination = pino.destination({ dest: 2, minLength: 4096, sync: true });
  const timer = setInterval(() => destination.flush(), LOG_FLUSH_MS);
  timer.unref();
  // Also after close: a line logged after keel stopped (serve's "stopped") is written.
  process.once('exit', () => destination.flushSync());
  return {
    destination,
    close() {
      clearInterval(timer);
      destination.flushSync();
    },
  };
}
