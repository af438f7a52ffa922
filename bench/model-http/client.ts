// The client side of the model-HTTP bench, one process per client kind so its CPU is its
// own: `calls` streamed chat completions against the fixture-model server, `inflight` at
// once, each response body read to the end. Prints one JSON line: CPU ms (from
// process.cpuUsage) and wall seconds of the measured calls, after `warmup` calls.

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { createNodeHttpTransport } from '../../src/providers/node-http-transport.ts';

type Kind = 'fetch' | 'http' | 'keel-transport' | 'keel-provider' | 'keel-provider-unstreamed';

const [kind, url, callsText, inflightText, warmupText] = process.argv.slice(2) as [
  Kind,
  string,
  string,
  string,
  string,
];
const calls = Number(callsText);
const inflight = Number(inflightText);
const warmup = Number(warmupText);
const USER_TEXT = 'what time is it?\n@call clock_now {}';
const body = JSON.stringify({
  model: 'fixture',
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: USER_TEXT }],
});
const target = new URL('/v1/chat/completions', url);
const agent = new HttpAgent({ keepAlive: true, maxSockets: inflight });

function nodeHttp(): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => resolve(res),
    );
    req.on('error', reject);
    req.end(body);
  });
}

const transport = createNodeHttpTransport();

/**
 * keel's whole model call: the AI SDK's openai-compatible package over keel's transport,
 * with the trace recording, asked as a turn of the turn bench asks (every built-in tool);
 * streamed (keel's default) or not (`stream = false` in the provider's config). Loaded only
 * for those kinds, so the other clients' processes stay lean.
 */
async function providerCall(): Promise<() => Promise<void>> {
  const { createConfiguredProviders } = await import('../../src/providers/configured.ts');
  const { builtinTools } = await import('../../src/tools/builtin/index.ts');
  const { createToolRegistry } = await import('../../src/tools/registry.ts');
  const { toolDefinitions } = await import('../../src/runtime/tool-step.ts');
  const agentSpec = (await import('../../test/helpers/agent-spec.ts')).agentSpec();
  const provider = createConfiguredProviders(
    {
      fixture: {
        type: 'openai-compatible',
        base_url: new URL('/v1', url).href,
        stream: kind !== 'keel-provider-unstreamed',
      },
    },
    {},
  ).fixture;
  if (!provider) throw new Error('the fixture provider was not built');
  // An agent without allowed_families / allowed_tools: every built-in tool.
  const agent = { ...agentSpec, tenant: 'bench', name: 'agent', created_at: '', updated_at: '' };
  const tools = toolDefinitions(createToolRegistry(builtinTools()), agent);
  return async () => {
    const response = await provider.complete({
      model: 'fixture',
      system: 'You are a helpful assistant.',
      context: [],
      entries: [
        {
          kind: 'user',
          run_id: 'run-bench',
          seq: 1,
          attempt: 1,
          ts: new Date().toISOString(),
          body: { text: USER_TEXT, payload: { text: USER_TEXT } },
        },
      ],
      tools,
      temperature: 0.2,
      max_tokens: 4096,
      signal: new AbortController().signal,
    });
    if (response.assistant.tool_calls.length !== 1) throw new Error('no tool call came back');
  };
}
const callProvider =
  kind === 'keel-provider' || kind === 'keel-provider-unstreamed' ? await providerCall() : null;

async function readBody(response: Response): Promise<void> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) if ((await reader.read()).done) break;
}

async function once(): Promise<void> {
  if (callProvider) {
    await callProvider();
    return;
  }
  if (kind === 'keel-transport') {
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    await readBody(await transport(target, init, () => {}));
    return;
  }
  if (kind === 'fetch') {
    // What the AI SDK does by default: the global fetch (undici), a web stream body.
    const response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await readBody(response);
    return;
  }
  const res = await nodeHttp();
  for await (const chunk of res) void chunk;
}

async function run(count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < count) {
        next += 1;
        await once();
      }
    }),
  );
}

await run(warmup);
const cpu = process.cpuUsage();
const started = performance.now();
await run(calls);
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({ cpuMs: (used.user + used.system) / 1000, seconds: (performance.now() - started) / 1000 })}\n`,
);
agent.destroy();
