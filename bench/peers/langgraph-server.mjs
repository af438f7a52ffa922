// The LangGraph.js API server (@langchain/langgraph-api's startServer, what `langgraphjs
// dev` runs, in-memory storage flushed to files in <dir>) serving langgraph-graph.mjs as
// assistant "agent". argv: <dir> <fixture base URL>. Prints "peer listening on <url>".

import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startServer } from '@langchain/langgraph-api/server';

const [dir, baseUrl] = process.argv.slice(2);
process.env.FIXTURE_BASE_URL = baseUrl;
process.chdir(dir);

const port = await new Promise((resolve) => {
  const probe = createServer();
  probe.listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});
const graph = fileURLToPath(new URL('./langgraph-graph.mjs', import.meta.url));
const { host, cleanup } = await startServer({
  port,
  // PEER_WORKERS (default 64, the turn bench's in-flight turns): runs executed at once.
  nWorkers: Number(process.env.PEER_WORKERS ?? 64),
  host: '127.0.0.1',
  cwd: dir,
  graphs: { agent: `${graph}:graph` },
});
process.stdout.write(`peer listening on http://${host.replace(/^https?:\/\//, '')}\n`);
await new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});
await cleanup();
process.exit(0);
