// Entry point of the `keel` command (bin/keel.js and `npm start` load this file).

import { once } from 'node:events';
import { runCli } from './run.ts';

const code = await runCli(process.argv.slice(2));
// Output still buffered in a stream (a pipe whose reader is slow) would be cut short by
// process.exit: let it drain first.
for (const stream of [process.stdout, process.stderr]) {
  if (stream.writableLength > 0) await once(stream, 'drain');
}
// Exit explicitly: a stopped server may leave handles (pino's destination, sockets in
// TIME_WAIT bookkeeping) that would otherwise keep the process alive.
process.exit(code);
