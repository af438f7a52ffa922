// The floor of the turn benchmark, as its own process: fastify answering the two requests
// of a turn (submit, wait) with JSON bodies validated like keel's, plus the same number of
// raw SQLite commits keel makes per turn (WAL, synchronous FULL or NORMAL as keel's
// durability modes set): one in the submit, the rest in the wait. What any durable
// HTTP runtime on this stack must at least spend per turn.
// argv: <data dir> <full|process> <commits per turn>

import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { join } from 'node:path';

const [dir = '.', durability = 'full', commitsText = '10'] = process.argv.slice(2);
const commitsPerTurn = Math.max(1, Math.round(Number(commitsText)));
const db = new Database(join(dir, `floor-${durability}.db`));
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
db.exec(
  'create table if not exists t (id integer primary key, run text not null, data text not null)',
);
const insert = db.prepare('insert into t (run, data) values (?, ?)');
const commit = db.transaction((run: string, data: string) => insert.run(run, data));

const app = Fastify({ logger: false });
let nextRun = 0;
app.post<{ Body: { scope?: unknown; payload?: { text?: unknown } } }>(
  '/turns',
  async (request, reply) => {
    const { scope, payload } = request.body;
    if (typeof scope !== 'string' || typeof payload?.text !== 'string')
      return reply.code(400).send({ error: 'bad body' });
    const runId = `run-${nextRun++}`;
    commit(runId, JSON.stringify({ scope, payload }));
    return reply.code(202).send({ run_id: runId, status: 'queued' });
  },
);
app.get<{ Params: { id: string } }>('/runs/:id/wait', async (request) => {
  const { id } = request.params;
  for (let i = 1; i < commitsPerTurn; i++)
    commit(id, JSON.stringify({ step: i, text: 'x'.repeat(200) }));
  return { run: { id, status: 'succeeded' } };
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`floor listening on ${address}\n`);
await new Promise<void>((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});
await app.close();
db.close();
