// The client side of the model-HTTP bench, one process per client kind so its CPU is its
// own: `calls` streamed chat completions against the fixture-model server, `inflight` at
// once, each response body read to the end. Prints one JSON line: CPU ms (from
// process.cpuUsage) and wall seconds of the measured calls, after `warmup` calls.

import { Readable } from 'node:stream';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';

type Kind = 'fetch' | 'http' | 'http-web';

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
const body = JSON.stringify({
  model: 'fixture',
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'what time is it?\n@call clock_now {}' }],
});
const target = new URL('/v1/chat/completions', url);
const agent = new HttpAgent({ keepAlive: true, maxSockets: inflight });

function nodeHttp(): Promise<Readable> {
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

async function once(): Promise<void> {
  if (kind === 'fetch') {
    // What the AI SDK does by default: the global fetch (undici), a web stream body.
    const response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (;;) if ((await reader.read()).done) break;
    return;
  }
  const res = await nodeHttp();
  if (kind === 'http') {
    for await (const chunk of res) void chunk;
    return;
  }
  // node:http wrapped as a fetch Response, as a custom fetch for the AI SDK would be.
  const response = new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) if ((await reader.read()).done) break;
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
