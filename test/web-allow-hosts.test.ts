// allow_hosts entries with a port (issue: found by attacking keel, item 5). Before, an
// entry was compared with the bare host name: "127.0.0.1:9000" opened nothing, and
// "127.0.0.1" opened every port of the host (keel's own API included). Now "host:port"
// opens that port only — for web_fetch ([web]) and for the URLs tenants name for MCP
// servers and webhooks ([mcp], [webhooks]) — checked against two real loopback servers.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { parseAllowedHost } from '../src/web/allow-hosts.ts';
import { createFetcher } from '../src/web/fetcher.ts';
import { checkPublicHost } from '../src/web/public-host.ts';

const servers: Server[] = [];
let allowedPort = 0;
let otherPort = 0;
const hits = new Map<number, number>();

async function loopbackServer(): Promise<number> {
  const server = createServer((request, response) => {
    const port = (request.socket.address() as AddressInfo).port;
    hits.set(port, (hits.get(port) ?? 0) + 1);
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(`served on ${port}`);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

before(async () => {
  allowedPort = await loopbackServer();
  otherPort = await loopbackServer();
});
after(() => {
  for (const server of servers) server.close();
});

async function fetchCode(allowHosts: string[], port: number): Promise<string> {
  const fetcher = createFetcher({ allowHosts });
  try {
    const page = await fetcher(`http://127.0.0.1:${port}/`, new AbortController().signal);
    return `ok: ${page.text}`;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('allow_hosts with a port', () => {
  it('web_fetch: "127.0.0.1:<port>" reaches that port and no other', async () => {
    const entry = [`127.0.0.1:${allowedPort}`];
    const allowed = await fetchCode(entry, allowedPort);
    const other = await fetchCode(entry, otherPort);
    console.log(
      `allow ${entry[0]}: port ${allowedPort} → ${allowed}; port ${otherPort} → ${other}`,
    );
    assert.equal(allowed, `ok: served on ${allowedPort}`);
    assert.equal(other, 'WEB_ADDRESS_BLOCKED');
    assert.equal(hits.get(otherPort) ?? 0, 0, 'the other port saw no connection');
    // Without a port an entry opens the host on every port (documented).
    assert.match(await fetchCode(['127.0.0.1'], otherPort), /^ok/);
    // An IPv6 entry with a port does not open the IPv4 host.
    assert.equal(await fetchCode([`[::1]:${allowedPort}`], allowedPort), 'WEB_ADDRESS_BLOCKED');
  });

  it('MCP and webhook URLs: "127.0.0.1:<port>" opens that port only; default ports count', async () => {
    const entry = [`127.0.0.1:${allowedPort}`];
    const verdict = (url: string, list: string[] = entry) =>
      checkPublicHost(new URL(url), list, '[mcp] allow_hosts').then((answer) => answer.ok);
    assert.equal(await verdict(`http://127.0.0.1:${allowedPort}/mcp`), true);
    assert.equal(await verdict(`http://127.0.0.1:${otherPort}/mcp`), false);
    assert.equal(await verdict('http://127.0.0.1/mcp'), false);
    assert.equal(await verdict('http://127.0.0.1/mcp', ['127.0.0.1:80']), true);
    assert.equal(await verdict('https://127.0.0.1/mcp', ['127.0.0.1:80']), false);
    assert.equal(await verdict('https://127.0.0.1/mcp', ['127.0.0.1:443']), true);
    assert.equal(await verdict(`http://[::1]:${allowedPort}/`, [`[::1]:${allowedPort}`]), true);
    assert.equal(await verdict(`http://[::1]:${otherPort}/`, [`[::1]:${allowedPort}`]), false);
  });

  it('entries are parsed at startup: a bad one is CONFIG_INVALID naming it', () => {
    assert.deepEqual(parseAllowedHost('Models.LAN.:11434'), { host: 'models.lan', port: 11434 });
    assert.deepEqual(parseAllowedHost('::1'), { host: '0:0:0:0:0:0:0:1', port: null });
    assert.deepEqual(parseAllowedHost('[::1]:8443'), { host: '0:0:0:0:0:0:0:1', port: 8443 });
    for (const bad of ['127.0.0.1:0', '127.0.0.1:70000', 'host:port', 'http://x', '', '::1:80x']) {
      assert.equal(typeof parseAllowedHost(bad), 'string', bad);
    }
    for (const section of ['web', 'mcp', 'webhooks']) {
      const toml = `[${section}]\nallow_hosts = ["127.0.0.1:99999"]\n`;
      assert.throws(
        () => loadConfigFrom(toml),
        (error: Error & { code?: string }) =>
          error.code === 'CONFIG_INVALID' && /allow_hosts/.test(error.message),
        section,
      );
    }
  });
});

function loadConfigFrom(toml: string) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-allow-hosts-'));
  try {
    writeFileSync(join(dir, 'keel.toml'), toml);
    return loadConfig({ data_dir: dir, config: join(dir, 'keel.toml') }, {}, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
