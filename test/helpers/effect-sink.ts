// The "outside world" for crash tests: a separate process on 127.0.0.1 that survives
// keel's SIGKILLs and logs every execution of a test sink tool, so executions are counted
// outside keel's own database.
//
//   node --import ./scripts/ts-register.mjs test/helpers/effect-sink.ts LOG_FILE
//   → prints "effect-sink listening on http://127.0.0.1:PORT"
//
// POST /effects {tool, idempotency_key, run_id, call_id, scope, args: {value?, hold_ms?}, pid}
//   holds the answer for args.hold_ms, then appends one JSON line
//   {seq, t_start, t_end, ...request} to LOG_FILE and answers {ok, key, executions}
//   (executions of that key so far). A request whose client went away is still logged:
//   the effect happened on this side.
// GET /effects[?run_id=] → {effects: [...lines]}

import { appendFileSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { SinkEffect } from './crash-checks.ts';

/** What the checkers read (crash-checks.ts), plus the arguments the tool sent. */
interface Effect extends SinkEffect {
  args: { value?: string; hold_ms?: number };
}

const logFile = process.argv[2];
if (!logFile) {
  console.error('usage: effect-sink.ts LOG_FILE');
  process.exit(2);
}

function readLog(): Effect[] {
  if (!existsSync(logFile as string)) return [];
  return readFileSync(logFile as string, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Effect);
}

let seq = readLog().length;
const perKey = new Map<string, number>();
for (const effect of readLog()) {
  perKey.set(effect.idempotency_key, (perKey.get(effect.idempotency_key) ?? 0) + 1);
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://sink');
  const answer = (status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (request.method === 'GET' && url.pathname === '/effects') {
    const runId = url.searchParams.get('run_id');
    answer(200, { effects: readLog().filter((e) => runId === null || e.run_id === runId) });
    return;
  }
  if (request.method !== 'POST' || url.pathname !== '/effects') {
    answer(404, { error: 'not found' });
    return;
  }
  const tStart = Date.now();
  let text = '';
  request.on('data', (chunk: Buffer) => (text += chunk.toString()));
  request.on('end', () => {
    let body: Omit<Effect, 'seq' | 't_start' | 't_end'>;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      answer(400, { error: 'bad json' });
      return;
    }
    setTimeout(() => {
      seq += 1;
      const count = (perKey.get(body.idempotency_key) ?? 0) + 1;
      perKey.set(body.idempotency_key, count);
      const effect: Effect = { seq, t_start: tStart, t_end: Date.now(), ...body };
      // Synchronous append: the line is in the file before the answer leaves.
      appendFileSync(logFile, `${JSON.stringify(effect)}\n`);
      if (!response.destroyed)
        answer(200, { ok: true, key: body.idempotency_key, executions: count });
    }, body.args?.hold_ms ?? 0);
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`effect-sink listening on http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
