// Entry point of the `keel` command (bin/keel.js and `npm start` load this file).

import { runCli } from './run.ts';

const code = await runCli(process.argv.slice(2));
// Exit explicitly: a stopped server may leave handles (pino's destination, sockets in
// TIME_WAIT bookkeeping) that would otherwise keep the process alive.
process.exit(code);
