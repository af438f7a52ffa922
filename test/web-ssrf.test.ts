// The public-web boundary against an SSRF payload list. Every payload is fetched through
// the real fetcher; a loopback canary (127.0.0.1 and ::1, the port every payload names)
// must see zero connections. The only server reachable is a fixture on 127.0.0.2 named
// by an allow_hosts entry. A guard around the connection factory refuses any pinned
// address outside loopback, so no traffic can ever leave the machine, even on a bug.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { ParsedAddress } from '../src/web/address.ts';
import { formatAddress } from '../src/web/address.ts';
import type { Fetcher } from '../src/web/fetcher.ts';
import { createFetcher, pinnedAgent } from '../src/web/fetcher.ts';

const PUBLIC_IP = '93.184.216.34';

interface Canary {
  server: Server;
  connections: number;
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function canaryServer(): Canary {
  const canary: Canary = { server: createServer((_req, res) => res.end('canary')), connections: 0 };
  canary.server.on('connection', () => (canary.connections += 1));
  return canary;
}

function isLoopback(address: ParsedAddress): boolean {
  const text = formatAddress(address);
  return address.family === 4 ? text.startsWith('127.') : text === '0:0:0:0:0:0:0:1';
}

describe('web_fetch SSRF boundary', () => {
  const canary4 = canaryServer();
  const canary6 = canaryServer();
  let port = 0;
  let fixtureConnections = 0;
  const fixture = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fixture.test');
    if (url.pathname === '/ok') {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(
        '<html><head><title>Fixture &amp; page</title><script>evil()</script></head><body><nav>menu</nav><p>Hello <b>world</b></p></body></html>',
      );
      return;
    }
    if (url.pathname === '/redirect') {
      response.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      response.end();
      return;
    }
    const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
    if (chain) {
      response.writeHead(301, { location: `/chain/${Number(chain[1]) + 1}` });
      response.end();
      return;
    }
    response.setHeader('content-type', 'image/png');
    response.end('binary');
  });
  fixture.on('connection', () => (fixtureConnections += 1));

  const resolverCalls = new Map<string, number>();
  const answers: Record<string, string[][]> = {
    'fixture.test': [['127.0.0.2']],
    'pinned.test': [['127.0.0.2'], ['127.0.0.1']],
    'rebind.test': [[PUBLIC_IP], ['127.0.0.1']],
    'public.example': [[PUBLIC_IP]],
    'mixed.test': [[PUBLIC_IP, '10.0.0.1']],
    'mixed6.test': [[PUBLIC_IP, '::1']],
    'mapped.test': [[PUBLIC_IP, '::ffff:127.0.0.1']],
    'localtest.me': [['127.0.0.1']],
    '127.0.0.1.nip.io': [['127.0.0.1']],
    'metadata.google.internal': [['169.254.169.254']],
  };
  const pinnedOutside: string[] = [];
  let fetcher: Fetcher;

  before(async () => {
    port = await listen(canary4.server, '127.0.0.1', 0);
    await listen(canary6.server, '::1', port).catch(() => undefined);
    await listen(fixture, '127.0.0.2', port);
    fetcher = createFetcher({
      allowHosts: ['fixture.test', 'pinned.test'],
      hopTimeoutMs: 2000,
      async resolve(host) {
        const calls = resolverCalls.get(host) ?? 0;
        resolverCalls.set(host, calls + 1);
        const sequence = answers[host];
        if (!sequence) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        const answer = sequence[Math.min(calls, sequence.length - 1)] ?? [];
        return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      },
      // The test's own guard: a real connection only ever to loopback.
      dispatcherFor(address, _host, timeout) {
        if (!isLoopback(address)) {
          pinnedOutside.push(formatAddress(address));
          throw new Error(`test guard: refusing to connect to ${formatAddress(address)}`);
        }
        return pinnedAgent(address, timeout);
      },
    });
  });

  after(async () => {
    for (const server of [canary4.server, canary6.server, fixture]) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  async function outcome(url: string): Promise<string> {
    try {
      await fetcher(url, new AbortController().signal);
      return 'fetched';
    } catch (error) {
      return String((error as { code?: unknown }).code ?? (error as Error).message);
    }
  }

  it('fetches the allowed fixture through the pinned connection (positive control)', async () => {
    const page = await fetcher(`http://fixture.test:${port}/ok`, new AbortController().signal);
    assert.equal(page.title, 'Fixture & page');
    assert.equal(page.text, 'Hello world');
    assert.equal(await outcome(`http://fixture.test:${port}/image`), 'WEB_CONTENT_TYPE');
  });

  it('blocks every payload before any connection', async () => {
    const P = port;
    const direct = [
      // loopback IPv4 in every spelling
      `http://127.0.0.1:${P}/`,
      `http://127.1:${P}/`,
      `http://127.0.1:${P}/`,
      `http://127.000.000.001:${P}/`,
      `http://0177.0.0.1:${P}/`,
      `http://0x7f.1:${P}/`,
      `http://0x7f.0.0.1:${P}/`,
      `http://0x7f000001:${P}/`,
      `http://2130706433:${P}/`,
      `http://017700000001:${P}/`,
      `http://127.255.255.254:${P}/`,
      `http://１２７.０.０.１:${P}/`,
      `http://%31%32%37.0.0.1:${P}/`,
      `http://127.0.0.1.:${P}/`,
      `HTTP://127.0.0.1:${P}/`,
      // unspecified
      `http://0:${P}/`,
      `http://0.0.0.0:${P}/`,
      `http://[::]:${P}/`,
      `http://[0:0:0:0:0:0:0:0]:${P}/`,
      // IPv6 loopback and IPv4 inside IPv6
      `http://[::1]:${P}/`,
      `http://[0:0:0:0:0:0:0:1]:${P}/`,
      `http://[0000::1]:${P}/`,
      `http://[::ffff:127.0.0.1]:${P}/`,
      `http://[::fFFf:7f00:1]:${P}/`,
      `http://[::127.0.0.1]:${P}/`,
      `http://[64:ff9b::7f00:1]:${P}/`,
      `http://[64:ff9b:1::7f00:1]:${P}/`,
      `http://[2002:7f00:1::]:${P}/`,
      `http://[2002:a00:1::]:${P}/`,
      `http://[64:ff9b::a9fe:a9fe]:${P}/`,
      // loopback names
      `http://localhost:${P}/`,
      `http://LOCALHOST:${P}/`,
      `http://localhost.:${P}/`,
      `http://foo.localhost:${P}/`,
      `http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:${P}/`,
      `http://127.0.0.1.nip.io:${P}/`,
      `http://localtest.me:${P}/`,
      // private, CGNAT, benchmarking, protocol assignments, ULA
      `http://10.0.0.1:${P}/`,
      `http://172.16.0.1:${P}/`,
      `http://192.168.1.1:${P}/`,
      `http://100.64.0.1:${P}/`,
      `http://198.18.0.1:${P}/`,
      `http://192.0.0.1:${P}/`,
      `http://[fc00::1]:${P}/`,
      `http://[fd00::1]:${P}/`,
      // link-local and cloud metadata
      `http://169.254.169.254/`,
      `http://2852039166/`,
      `http://0xa9fea9fe/`,
      `http://0251.0376.0251.0376/`,
      `http://[::ffff:169.254.169.254]/`,
      `http://[fe80::1]:${P}/`,
      `http://[fd00:ec2::254]/`,
      `http://169.254.170.2/`,
      `http://100.100.100.200/`,
      `http://metadata.google.internal/`,
      // multicast, broadcast, reserved, documentation, Teredo, site-local
      `http://224.0.0.1:${P}/`,
      `http://239.255.255.250:${P}/`,
      `http://255.255.255.255:${P}/`,
      `http://240.0.0.1:${P}/`,
      `http://[ff02::1]:${P}/`,
      `http://[fec0::1]:${P}/`,
      `http://192.0.2.1:${P}/`,
      `http://198.51.100.1:${P}/`,
      `http://203.0.113.1:${P}/`,
      `http://[2001:db8::1]:${P}/`,
      `http://[2001::1]:${P}/`,
      `http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]:${P}/`,
      // URL parser confusion: the host WHATWG parses is what is checked
      `http://public.example@127.0.0.1:${P}/`,
      `http://public.example:80@127.0.0.1:${P}/`,
      `http://127.0.0.1:${P}#@public.example/`,
      `http://127.0.0.1:${P}\\@public.example/`,
      `http://[fe80::1%25eth0]:${P}/`,
      // schemes
      'file:///etc/passwd',
      `gopher://127.0.0.1:${P}/`,
      `ftp://127.0.0.1:${P}/`,
      `ws://127.0.0.1:${P}/`,
      'data:text/plain,hello',
      'javascript:alert(1)',
      // DNS answers with one non-public address among public ones
      `http://mixed.test:${P}/`,
      `http://mixed6.test:${P}/`,
      `http://mapped.test:${P}/`,
    ];
    const redirected = [
      `http://127.0.0.1:${P}/`,
      `http://localhost:${P}/`,
      `http://[::1]:${P}/`,
      `http://2130706433:${P}/`,
      `http://[::ffff:7f00:1]:${P}/`,
      `//127.0.0.1:${P}/`,
      'file:///etc/passwd',
      'http://169.254.169.254/latest/meta-data/',
      `http://mixed.test:${P}/`,
    ].map((to) => `http://fixture.test:${P}/redirect?to=${encodeURIComponent(to)}`);
    const payloads = [...direct, ...redirected, `http://fixture.test:${P}/chain/0`];
    const results = await Promise.all(payloads.map(async (url) => [url, await outcome(url)]));
    const passed = results.filter(([, result]) => !/^WEB_/.test(result as string));
    assert.deepEqual(passed, [], 'every payload ends in a WEB_ error');
    const chain = results.at(-1)?.[1];
    assert.equal(chain, 'WEB_TOO_MANY_REDIRECTS');
    assert.deepEqual(pinnedOutside, [], 'no connection was even attempted outside loopback');
    assert.equal(canary4.connections + canary6.connections, 0);
    console.log(
      `ssrf payloads=${payloads.length} blocked=${payloads.length - passed.length} canary_connections=${canary4.connections + canary6.connections}`,
    );
  });

  it('pins the connection to the checked address when DNS changes between lookups', async () => {
    // rebind.test: public first, loopback afterwards. The check passes on the public
    // answer, the connection is pinned to it (the guard sees it and refuses, as it
    // refuses every non-loopback address), DNS is asked once: loopback is never used.
    pinnedOutside.length = 0;
    assert.match(await outcome(`http://rebind.test:${port}/`), /test guard/);
    assert.deepEqual(pinnedOutside, [PUBLIC_IP]);
    assert.equal(resolverCalls.get('rebind.test'), 1);
    // pinned.test (allowed): 127.0.0.2 first, the canary's 127.0.0.1 afterwards. A real
    // undici connection must reach the fixture: the lookup hook never asks DNS again.
    const before = fixtureConnections;
    const page = await fetcher(`http://pinned.test:${port}/ok`, new AbortController().signal);
    assert.equal(page.title, 'Fixture & page');
    assert.equal(fixtureConnections, before + 1);
    assert.equal(resolverCalls.get('pinned.test'), 1);
    assert.equal(canary4.connections + canary6.connections, 0);
    console.log('ssrf rebinding cases=2 escapes=0 undici_pin_real_connection=pass');
  });
});
