// `keel fixture-model`: the deterministic fixture model (fixture-script.ts, the same
// rules as the in-process `fixture` provider) served as an OpenAI-compatible HTTP server
// on loopback, so tests and the demo drive the real `openai-compatible` provider path:
//   POST /v1/chat/completions  (JSON or SSE; tool calls streamed as deltas; usage)
//   GET  /v1/models
//   POST /v1/embeddings        (the `hash` memory embedder, memory/embedders/hash.ts)
//
// `@fail n status` over HTTP: there is no run id on the wire, so the first n requests of
// a conversation (everything up to its latest user message) fail, and only while no
// assistant message follows it — a resumed run never fails again after a response.

import { createHash } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import {
  decideFixtureStep,
  fixtureOverflow,
  fixtureFlushFact,
  fixtureAnswerText,
  parseFixtureScript,
  ScriptedFailures,
  splitIntoChunks,
} from './fixture-script.ts';
import type { WireAnswer, WireMessage } from './fixture-wire.ts';
import { MEMORY_FLUSH_MARKER, SUMMARY_REQUEST_MARKER } from './provider.ts';
import { completionChunks, completionJson, wireConversation } from './fixture-wire.ts';
import { HASH_DIMENSION, hashEmbed } from '../memory/embedders/hash.ts';

const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Statuses that tell a client when to come back. */
const RETRY_AFTER_STATUSES = new Set([429, 503, 529]);

export interface FixtureServerOptions {
  host?: string;
  port?: number;
  /** Pause between streamed chunks, so a stream is visible to a person (demo). */
  chunkDelayMs?: number;
  /** Sees every request (tests check headers and bodies). */
  onRequest?: (request: {
    method: string;
    path: string;
    headers: IncomingMessage['headers'];
    body: string;
  }) => void;
}

export interface FixtureServerStats {
  requests: number;
  /** Responses the client abandoned before they were complete (connection closed). */
  abandoned: number;
}

export interface FixtureServer {
  /** `http://HOST:PORT` (the OpenAI base URL is this + `/v1`). */
  url: string;
  stats: FixtureServerStats;
  close(): Promise<void>;
}

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpFailure(413, 'request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  response.end(text);
}

function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export async function startFixtureServer(
  options: FixtureServerOptions = {},
): Promise<FixtureServer> {
  const stats: FixtureServerStats = { requests: 0, abandoned: 0 };
  const failures = new ScriptedFailures();
  let sequence = 0;

  async function chatCompletion(
    body: string,
    response: ServerResponse,
    closed: AbortSignal,
  ): Promise<void> {
    let request: {
      model?: unknown;
      messages?: unknown;
      stream?: unknown;
      stream_options?: { include_usage?: unknown };
    };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      throw new HttpFailure(400, 'the body is not valid JSON');
    }
    if (!Array.isArray(request.messages)) throw new HttpFailure(400, 'messages: expected an array');
    const messages = request.messages as WireMessage[];
    const model = typeof request.model === 'string' ? request.model : 'fixture';
    const conversation = wireConversation(messages);
    const first = messages[0];
    const system =
      first?.role === 'system' && typeof first.content === 'string' ? first.content : '';
    const summarising = system.startsWith(SUMMARY_REQUEST_MARKER);
    // A memory flush request (memory-flush.ts): one memory_put call, no directives.
    const flushing = system.startsWith(MEMORY_FLUSH_MARKER);
    // A compaction's summarising request is answered by the summary rule, no directives.
    const script = parseFixtureScript(summarising || flushing ? '' : conversation.userText);
    const overflow = fixtureOverflow(script, tokens(JSON.stringify(messages)));
    if (overflow !== null) {
      throw new HttpFailure(400, overflow, 'invalid_request_error', 'context_length_exceeded');
    }
    if (script.sleepMs > 0) await delay(script.sleepMs, undefined, { signal: closed });

    if (script.fail && conversation.steps === 0) {
      const lastUser = messages.findLastIndex((message) => message.role === 'user');
      const key = createHash('sha256')
        .update(JSON.stringify(messages.slice(0, lastUser + 1)))
        .digest('hex');
      const nth = failures.next(key, script.fail.count);
      if (nth !== null) {
        const status = script.fail.status;
        throw Object.assign(
          new HttpFailure(
            status,
            `fixture: scripted failure ${nth} of ${script.fail.count} (status ${status})`,
            'fixture_error',
          ),
          { retryAfter: RETRY_AFTER_STATUSES.has(status) },
        );
      }
    }

    const step = conversation.steps + 1;
    const decision = decideFixtureStep(script, conversation);
    const calls = flushing
      ? [
          {
            id: 'flush_1',
            name: 'memory_put',
            arguments: JSON.stringify({ text: fixtureFlushFact(conversation.userText) }),
          },
        ]
      : decision.kind === 'calls'
        ? decision.calls.map((call, index) => ({ ...call, id: `call_${step}_${index + 1}` }))
        : [];
    const text = fixtureAnswerText({ flushing, summarising }, decision, conversation.userText);
    sequence += 1;
    const answer: WireAnswer = {
      id: `chatcmpl-fixture-${sequence}`,
      model,
      created: 0,
      text,
      calls,
      usage: {
        prompt_tokens: tokens(JSON.stringify(messages)),
        completion_tokens: tokens(text) + calls.length * 8,
        total_tokens: 0,
      },
    };
    answer.usage.total_tokens = answer.usage.prompt_tokens + answer.usage.completion_tokens;

    if (request.stream !== true) {
      sendJson(response, 200, completionJson(answer));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const textChunks = text === '' ? [] : splitIntoChunks(text, Math.max(1, script.streamChunks));
    const includeUsage = request.stream_options?.include_usage === true;
    for (const chunk of completionChunks(answer, textChunks, includeUsage)) {
      if (closed.aborted) return;
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (options.chunkDelayMs) await delay(options.chunkDelayMs, undefined, { signal: closed });
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    response.end('data: [DONE]\n\n');
  }

  function embeddings(body: string, response: ServerResponse): void {
    let request: { input?: unknown; model?: unknown; dimensions?: unknown };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      throw new HttpFailure(400, 'the body is not valid JSON');
    }
    const inputs = typeof request.input === 'string' ? [request.input] : request.input;
    if (!Array.isArray(inputs) || !inputs.every((item) => typeof item === 'string')) {
      throw new HttpFailure(400, 'input: expected a string or an array of strings');
    }
    const dimensions =
      typeof request.dimensions === 'number' &&
      Number.isInteger(request.dimensions) &&
      request.dimensions > 0
        ? Math.min(request.dimensions, 4096)
        : HASH_DIMENSION;
    const used = inputs.reduce((sum, text: string) => sum + tokens(text), 0);
    sendJson(response, 200, {
      object: 'list',
      data: inputs.map((text: string, index) => ({
        object: 'embedding',
        index,
        embedding: Array.from(hashEmbed(text, dimensions)),
      })),
      model: typeof request.model === 'string' ? request.model : 'fixture-hashing',
      usage: { prompt_tokens: used, total_tokens: used },
    });
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    stats.requests += 1;
    const closed = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) {
        stats.abandoned += 1;
        closed.abort();
      }
    });
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const method = request.method ?? 'GET';
    try {
      const body = await readBody(request);
      options.onRequest?.({ method, path, headers: request.headers, body });
      if (method === 'POST' && path === '/v1/chat/completions')
        await chatCompletion(body, response, closed.signal);
      else if (method === 'POST' && path === '/v1/embeddings') embeddings(body, response);
      else if (method === 'GET' && path === '/v1/models') {
        sendJson(response, 200, {
          object: 'list',
          data: [{ id: 'fixture', object: 'model', created: 0, owned_by: 'keel' }],
        });
      } else throw new HttpFailure(404, `no route ${method} ${path}`);
    } catch (error) {
      if (closed.signal.aborted || response.headersSent) {
        response.destroy();
        return;
      }
      const failure =
        error instanceof HttpFailure ? error : new HttpFailure(500, String(error), 'server_error');
      const headers: Record<string, string> = (failure as { retryAfter?: boolean }).retryAfter
        ? { 'retry-after': '1', 'retry-after-ms': '10' }
        : {};
      sendJson(
        response,
        failure.status,
        { error: { message: failure.message, type: failure.type, code: failure.code } },
        headers,
      );
    }
  }

  const server: Server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    stats,
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
