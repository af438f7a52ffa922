// The soak's load generator, a process of its own (bench/soak.ts starts it) so its
// sockets and memory never count against keel's. Until its deadline it keeps up, at
// once: turns (submit + wait), slow clients trickling a body byte by byte, and SSE
// streams opened and dropped at random. keel is SIGKILLed and restarted under it, so
// every failure to connect is counted and retried, never fatal. Prints one JSON line.
//
//   node --import tsx bench/soak-load.ts <url> <seconds>

import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

const [url = '', secondsText = '60'] = process.argv.slice(2);
const deadline = Date.now() + Number(secondsText) * 1000;
const { hostname, port } = new URL(url);
const TENANT = 'soak';
const TURN_LOOPS = 4;
const SLOW_LOOPS = 16;
const SSE_LOOPS = 6;

const counts = {
  turns_ok: 0,
  turn_errors: 0,
  slow_clients: 0,
  /** Answered 408 REQUEST_TIMEOUT and closed by keel. */
  slow_cut_408: 0,
  /** Refused or reset (keel being restarted). */
  slow_no_connection: 0,
  sse_opened: 0,
  sse_refused_429: 0,
  sse_errors: 0,
};
const recentRuns: string[] = [];

async function json(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

async function turnLoop(loop: number): Promise<void> {
  for (let turn = 0; Date.now() < deadline; turn += 1) {
    try {
      const submitted = await json('POST', `/v1/tenants/${TENANT}/turns`, {
        agent: 'echo',
        scope: `s${loop}-${turn % 20}`,
        payload: { text: `turn ${turn} of loop ${loop} ${'x'.repeat(turn % 500)}` },
      });
      const runId = submitted.body.run_id;
      if (typeof runId !== 'string') throw new Error(`submit: ${submitted.status}`);
      recentRuns.push(runId);
      if (recentRuns.length > 50) recentRuns.shift();
      const waited = await json('GET', `/v1/tenants/${TENANT}/runs/${runId}/wait?timeout_ms=20000`);
      if (waited.status !== 200) throw new Error(`wait: ${waited.status}`);
      counts.turns_ok += 1;
    } catch {
      counts.turn_errors += 1;
      await delay(200);
    }
  }
}

/** One slow client: valid headers, then a body at one byte per 200 ms until cut. */
function slowClient(): Promise<void> {
  return new Promise((resolve) => {
    counts.slow_clients += 1;
    const socket = connect({ host: hostname, port: Number(port) });
    let timer: NodeJS.Timeout | undefined;
    let answer = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8').slice(0, 64);
    });
    socket.once('connect', () => {
      socket.write(
        `POST /v1/tenants/${TENANT}/turns HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      );
      timer = setInterval(() => socket.write(' '), 200);
    });
    socket.once('close', () => {
      clearInterval(timer);
      if (answer.startsWith('HTTP/1.1 408')) counts.slow_cut_408 += 1;
      else if (Date.now() < deadline) counts.slow_no_connection += 1;
      resolve();
    });
    // Past the deadline the client gives up itself.
    setTimeout(() => socket.destroy(), Math.max(0, deadline - Date.now())).unref();
  });
}

async function slowLoop(): Promise<void> {
  while (Date.now() < deadline) {
    await slowClient();
    await delay(100);
  }
}

async function sseLoop(): Promise<void> {
  while (Date.now() < deadline) {
    const runId = recentRuns[Math.floor(Math.random() * recentRuns.length)];
    if (!runId) {
      await delay(200);
      continue;
    }
    const controller = new AbortController();
    try {
      const response = await fetch(`${url}/v1/tenants/${TENANT}/runs/${runId}/events`, {
        signal: controller.signal,
      });
      if (response.status === 429) counts.sse_refused_429 += 1;
      else counts.sse_opened += 1;
      // Read for a while (or to the end), then drop the connection.
      const reader = response.body?.getReader();
      const until = Date.now() + 100 + Math.random() * 2000;
      while (reader && Date.now() < until) {
        const { done } = await Promise.race([
          reader.read(),
          delay(Math.max(1, until - Date.now())).then(() => ({ done: true })),
        ]);
        if (done) break;
      }
    } catch {
      counts.sse_errors += 1;
      await delay(200);
    } finally {
      controller.abort();
    }
  }
}

await Promise.all([
  ...Array.from({ length: TURN_LOOPS }, (_, loop) => turnLoop(loop)),
  ...Array.from({ length: SLOW_LOOPS }, () => slowLoop()),
  ...Array.from({ length: SSE_LOOPS }, () => sseLoop()),
]);
process.stdout.write(`${JSON.stringify(counts)}\n`);
