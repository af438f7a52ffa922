// web_fetch against misbehaving servers on 127.0.0.1: timeouts (silence, a stalled body,
// a trickled body, stalled DNS, a slow redirect chain), the caller's abort, the size cap
// (honest, lying and missing Content-Length) and the tool path the model sees. Every
// case also counts the server's open sockets afterwards: the fixture never closes a
// connection itself, so only the fetcher can have closed them. The fixture is reached
// through `allow_hosts: ['127.0.0.1']`, the boundary's one opening. Compressed bodies
// and the gzip bomb are in web-fetch-decoding.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ToolCallEnv } from '../src/runtime/tool-step.ts';
import { executeCall, prepareCall } from '../src/runtime/tool-step.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import type { FetchedPage } from '../src/tools/builtin/web-port.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { Agent } from '../src/types.ts';
import { createWebClient } from '../src/web/client.ts';
import type { Fetcher } from '../src/web/fetcher.ts';
import { createFetcher, WEB_LIMITS } from '../src/web/fetcher.ts';
import type { RawHandler, RawServer } from './helpers/web-fixture.ts';
import {
  endless,
  pipeChunked,
  startRawServer,
  trickleChunks,
  writeHead,
  writeResponse,
} from './helpers/web-fixture.ts';

const HOP_MS = 800;
const CAP = 64 * 1024;
/** Generous room over a deadline: the assertions are about ending, not about speed. */
const SLACK_MS = 2000;
const CHAIN_HOP_DELAY_MS = 600;
const CHAIN_TOTAL_MS = 1500;
const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

interface Outcome {
  code: string | null;
  page: FetchedPage | null;
  error: unknown;
  elapsedMs: number;
}

/** Runs one fetch; a fetch still running after `limitMs` is reported, not waited for. */
async function outcome(
  fetcher: Fetcher,
  url: string,
  signal = new AbortController().signal,
  limitMs = 8000,
): Promise<Outcome> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<'limit'>((resolve) => {
    timer = setTimeout(() => resolve('limit'), limitMs);
  });
  try {
    const result = await Promise.race([fetcher(url, signal), limit]);
    const elapsedMs = performance.now() - started;
    if (result === 'limit') return { code: 'STILL_RUNNING', page: null, error: null, elapsedMs };
    return { code: null, page: result, error: null, elapsedMs };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const elapsedMs = performance.now() - started;
    return { code: typeof code === 'string' ? code : null, page: null, error, elapsedMs };
  } finally {
    clearTimeout(timer);
  }
}

function agent(): Agent {
  return {
    model: 'fixture/echo',
    max_steps: 4,
    timeout_ms: 60_000,
    tool_timeout_ms: 30_000,
    temperature: 0,
    max_tokens: 256,
    context_window: 10,
    on_uncertain_effect: 'tell_model',
    tenant: 't',
    name: 'a',
    created_at: '',
    updated_at: '',
  };
}

describe('web_fetch against misbehaving servers', () => {
  let server: RawServer;
  let chainHopsServed = 0;
  const later = (socket: { destroyed: boolean }, ms: number, then: () => void): void => {
    setTimeout(() => {
      if (!socket.destroyed) then();
    }, ms);
  };
  const routes: Record<string, RawHandler> = {
    '/ok': (socket) => writeResponse(socket, 200, TEXT, 'fine'),
    '/silent': () => undefined,
    '/stalled-body': (socket) => {
      writeHead(socket, 200, { ...TEXT, 'content-length': '100' });
      socket.write('first ten.');
    },
    '/trickle': (socket) => {
      writeHead(socket, 200, { ...TEXT, 'transfer-encoding': 'chunked' });
      trickleChunks(socket, 100, () => Buffer.from('.'));
    },
    '/slow-chain': (socket, request) => {
      chainHopsServed += 1;
      const hop = Number(new URL(request.path, 'http://x').searchParams.get('hop') ?? 0);
      later(socket, CHAIN_HOP_DELAY_MS, () => {
        if (hop >= 5) writeResponse(socket, 200, TEXT, 'arrived');
        else writeResponse(socket, 302, { location: `/slow-chain?hop=${hop + 1}` }, '');
      });
    },
    '/exact-cap': (socket) => writeResponse(socket, 200, TEXT, 'a'.repeat(CAP)),
    '/cap-plus-one': (socket) => writeResponse(socket, 200, TEXT, 'a'.repeat(CAP + 1)),
    '/over-default-cap': (socket) =>
      writeResponse(socket, 200, TEXT, Buffer.alloc(WEB_LIMITS.maxBytes + 10, 'd')),
    '/flood': (socket) => {
      writeHead(socket, 200, { ...TEXT, 'transfer-encoding': 'chunked' });
      pipeChunked(socket, endless(Buffer.alloc(16_384, 'b')));
    },
    '/lying-short': (socket) => {
      writeHead(socket, 200, { ...TEXT, 'content-length': '100' });
      socket.write(Buffer.alloc(3 * CAP, 'x'));
    },
    '/lying-long': (socket) => {
      writeHead(socket, 200, { ...TEXT, 'content-length': String(10 * 1024 * 1024) });
      socket.write(Buffer.alloc(3 * CAP, 'y'));
    },
    '/premature-close': (socket) => {
      writeHead(socket, 200, { ...TEXT, 'content-length': '1000' });
      socket.write(Buffer.alloc(500, 'z'));
      later(socket, 50, () => socket.destroy());
    },
    '/split-character': (socket) =>
      writeResponse(socket, 200, TEXT, `${'a'.repeat(CAP - 1)}é and more`),
  };

  const fetcher = (): Fetcher =>
    createFetcher({ allowHosts: ['127.0.0.1'], hopTimeoutMs: HOP_MS, maxBytes: CAP });

  async function assertNoOpenSockets(): Promise<void> {
    assert.equal(await server.openSocketsAfter(), 0, 'every connection was closed by the client');
  }

  before(async () => {
    server = await startRawServer(routes);
  });
  after(async () => {
    await server.close();
  });

  describe('timeouts', () => {
    const timeoutCases: [string, string][] = [
      ['a server that accepts and never answers headers', '/silent'],
      ['headers, then a body that stalls', '/stalled-body'],
      ['a body trickled a byte per 100 ms (never idle, never done)', '/trickle'],
    ];
    for (const [name, path] of timeoutCases) {
      it(`${name}: WEB_TIMEOUT after the hop timeout, sockets closed`, async () => {
        const result = await outcome(fetcher(), server.url(path));
        assert.equal(result.code, 'WEB_TIMEOUT', String(result.error));
        // undici's own header/body timers are coarse and may fire a little early.
        assert.ok(result.elapsedMs >= HOP_MS / 2, `waited for a deadline (${result.elapsedMs})`);
        assert.ok(result.elapsedMs < HOP_MS + SLACK_MS, `ended in time (${result.elapsedMs})`);
        await assertNoOpenSockets();
      });
    }

    it('a resolver that never answers is inside the deadline too', async () => {
      const stalled = createFetcher({
        allowHosts: ['stalled-dns.test'],
        hopTimeoutMs: HOP_MS,
        resolve: () => new Promise(() => undefined),
      });
      const result = await outcome(stalled, 'http://stalled-dns.test/');
      assert.equal(result.code, 'WEB_TIMEOUT', String(result.error));
      assert.ok(result.elapsedMs < HOP_MS + SLACK_MS, `ended in time (${result.elapsedMs})`);
    });

    it('a redirect chain of hops each under the hop timeout ends at the overall deadline', async () => {
      // Six hops of 600 ms would arrive after 3.6 s; each fits the 1 s hop timeout, so only
      // a deadline over the whole fetch can stop the chain.
      const chain = createFetcher({
        allowHosts: ['127.0.0.1'],
        hopTimeoutMs: 1000,
        totalTimeoutMs: CHAIN_TOTAL_MS,
      });
      chainHopsServed = 0;
      const result = await outcome(chain, server.url('/slow-chain?hop=0'));
      assert.equal(result.code, 'WEB_TIMEOUT', String(result.error ?? result.page?.text));
      assert.ok(chainHopsServed >= 2, `the deadline spanned hops (${chainHopsServed} served)`);
      assert.ok(
        result.elapsedMs < CHAIN_TOTAL_MS + SLACK_MS,
        `ended in time (${result.elapsedMs})`,
      );
      await assertNoOpenSockets();
    });

    it('the same fetcher fetches normally after its timeouts', async () => {
      const shared = fetcher();
      assert.equal((await outcome(shared, server.url('/silent'))).code, 'WEB_TIMEOUT');
      const result = await outcome(shared, server.url('/ok'));
      assert.equal(result.page?.text, 'fine');
      await assertNoOpenSockets();
    });
  });

  describe("the caller's abort signal", () => {
    // A hop timeout far away: whatever ends these fetches early is the abort.
    const patient = (): Fetcher =>
      createFetcher({ allowHosts: ['127.0.0.1'], hopTimeoutMs: 30_000, maxBytes: CAP });

    for (const [name, path] of [
      ['while waiting for headers', '/silent'],
      ['while the body streams', '/trickle'],
    ] as const) {
      it(`${name}: rejects promptly with the caller's reason, sockets closed`, async () => {
        const controller = new AbortController();
        const reason = new Error('run cancelled');
        setTimeout(() => controller.abort(reason), 150);
        const result = await outcome(patient(), server.url(path), controller.signal);
        assert.equal(result.error, reason);
        assert.ok(result.elapsedMs < 150 + SLACK_MS, `ended in time (${result.elapsedMs})`);
        await assertNoOpenSockets();
      });
    }

    it('an already-aborted signal never connects', async () => {
      const before = server.connections();
      const reason = new Error('cancelled before start');
      const result = await outcome(patient(), server.url('/ok'), AbortSignal.abort(reason));
      assert.equal(result.error, reason);
      assert.equal(server.connections(), before);
    });
  });

  describe('size cap', () => {
    it('a body of exactly the cap is whole; one byte more is cut and marked', async () => {
      const exact = await outcome(fetcher(), server.url('/exact-cap'));
      assert.equal(exact.page?.text.length, CAP);
      assert.equal(exact.page?.truncated, false);
      const over = await outcome(fetcher(), server.url('/cap-plus-one'));
      assert.equal(over.page?.text.length, CAP);
      assert.equal(over.page?.truncated, true);
      await assertNoOpenSockets();
    });

    it('the default cap is 1 MiB', async () => {
      const unconfigured = createFetcher({ allowHosts: ['127.0.0.1'] });
      const result = await outcome(unconfigured, server.url('/over-default-cap'));
      assert.equal(result.page?.text.length, 1_048_576);
      assert.equal(result.page?.truncated, true);
      await assertNoOpenSockets();
    });

    it('an endless chunked body without a length is cut at the cap without waiting', async () => {
      const result = await outcome(fetcher(), server.url('/flood'));
      assert.equal(result.page?.text.length, CAP, String(result.error));
      assert.match(result.page?.text ?? '', /^b+$/);
      assert.equal(result.page?.truncated, true);
      assert.ok(result.elapsedMs < HOP_MS, `did not wait for an end (${result.elapsedMs})`);
      await assertNoOpenSockets();
    });

    it('a Content-Length smaller than what is sent frames the body: the rest is not read', async () => {
      const result = await outcome(fetcher(), server.url('/lying-short'));
      assert.equal(result.page?.text, 'x'.repeat(100));
      assert.equal(result.page?.truncated, false);
      await assertNoOpenSockets();
    });

    it('a Content-Length larger than the cap: cut at the cap, no wait for the rest', async () => {
      const result = await outcome(fetcher(), server.url('/lying-long'));
      assert.equal(result.page?.text.length, CAP, String(result.error));
      assert.match(result.page?.text ?? '', /^y+$/);
      assert.equal(result.page?.truncated, true);
      assert.ok(
        result.elapsedMs < HOP_MS,
        `did not wait for the promised rest (${result.elapsedMs})`,
      );
      await assertNoOpenSockets();
    });

    it('a connection closed before the promised length is WEB_FETCH_FAILED', async () => {
      const result = await outcome(fetcher(), server.url('/premature-close'));
      assert.equal(result.code, 'WEB_FETCH_FAILED', String(result.error));
      await assertNoOpenSockets();
    });

    it('a cut inside a multi-byte character drops the partial character, no U+FFFD', async () => {
      const result = await outcome(fetcher(), server.url('/split-character'));
      assert.equal(result.page?.truncated, true);
      assert.ok(!result.page?.text.includes('\ufffd'), 'no replacement character at the cut');
      assert.equal(result.page?.text.length, CAP - 1);
    });
  });

  describe('through the web_fetch tool, as a run calls it', () => {
    const registry = createToolRegistry(builtinTools());
    let calls = 0;
    async function callTool(url: string, signal: AbortSignal) {
      const web = createWebClient({
        searchUrl: '',
        allowHosts: ['127.0.0.1'],
        hopTimeoutMs: HOP_MS,
        maxBytes: CAP,
      });
      const env: ToolCallEnv = {
        registry,
        agent: agent(),
        run: { tenant: 't', agent: 'a', scope: 's', run_id: 'r1' },
        ports: { now: () => new Date(), web },
        signal,
        runDeadline: Date.now() + 60_000,
        now: Date.now,
      };
      calls += 1;
      const call = { call_id: `c${calls}`, name: 'web_fetch', arguments: JSON.stringify({ url }) };
      const prepared = prepareCall(call, env);
      assert.equal(prepared.kind, 'ready');
      if (prepared.kind !== 'ready') throw new Error('unreachable');
      return executeCall(call, prepared.tool, prepared.input, env);
    }

    it('a timeout reaches the model as WEB_TIMEOUT and the next call works', async () => {
      const started = performance.now();
      const timedOut = await callTool(server.url('/stalled-body'), new AbortController().signal);
      assert.equal(timedOut.ok, false);
      assert.equal(timedOut.error?.code, 'WEB_TIMEOUT');
      assert.ok(performance.now() - started < HOP_MS + SLACK_MS);
      const next = await callTool(server.url('/ok'), new AbortController().signal);
      assert.equal(next.ok, true);
      assert.equal((next.result as { text?: unknown }).text, 'fine');
      await assertNoOpenSockets();
    });

    it('a run cancel mid-body is TOOL_ABORTED and leaves no connection behind', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('run cancelled')), 150);
      const started = performance.now();
      const aborted = await callTool(server.url('/trickle'), controller.signal);
      assert.equal(aborted.error?.code, 'TOOL_ABORTED');
      assert.ok(performance.now() - started < 150 + SLACK_MS);
      await assertNoOpenSockets();
      const next = await callTool(server.url('/ok'), new AbortController().signal);
      assert.equal(next.ok, true);
    });
  });
});
