// The Mastra peer: an Agent on @ai-sdk/openai-compatible pointed at the `keel
// fixture-model` server, with the clock_now tool and Memory on LibSQL storage (a file in
// <dir>), served by @mastra/deployer's createNodeServer (what `mastra build` runs).
// argv: <dir> <fixture base URL>. Prints "peer listening on <url>".

import { createServer } from 'node:net';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { createNodeServer } from '@mastra/deployer/server';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';
import { z } from 'zod';

const [dir, baseUrl] = process.argv.slice(2);
const port = await new Promise((resolve) => {
  const probe = createServer();
  probe.listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});

const provider = createOpenAICompatible({ name: 'fixture', baseURL: baseUrl, apiKey: 'fixture' });
const storage = new LibSQLStore({ url: `file:${join(dir, 'mastra.db')}` });
const agent = new Agent({
  name: 'agent',
  instructions: 'You are a helpful assistant.',
  model: provider.chatModel('fixture'),
  tools: {
    clock_now: createTool({
      id: 'clock_now',
      description: 'The current time (UTC, ISO 8601).',
      inputSchema: z.object({}),
      execute: async () => ({ now: new Date().toISOString() }),
    }),
  },
  memory: new Memory({ storage, options: { lastMessages: 20 } }),
});
const mastra = new Mastra({
  agents: { agent },
  storage,
  logger: false,
  telemetry: { enabled: false },
  server: { port, host: '127.0.0.1' },
});
const server = await createNodeServer(mastra, { playground: false, isDev: false });
process.stdout.write(`peer listening on http://127.0.0.1:${port}\n`);
await new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});
server.close();
process.exit(0);
