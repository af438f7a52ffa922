// Artifacts are served so that stored bytes never run as keel's own origin (issue: an
// HTML artifact ran script on keel's origin, which in tokenless mode passes the
// cross-site check): every response carries a sandboxing CSP and nosniff, and every type
// that is not plainly passive is an attachment. Over real HTTP, on a tokenless server.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';

const HTML = `<!doctype html><script>
  fetch('/v1/tenants', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'pwned' }) });
</script>`;

describe('artifacts served from keel’s origin cannot run as it (tokenless mode)', () => {
  let server: ApiServer;
  const T = '/v1/tenants/demo';
  before(async () => {
    server = await startApiServer({ adminToken: null });
    await seedTenant(server, 'demo');
  });
  after(() => server.close());

  async function put(path: string, contentType: string, body: string): Promise<void> {
    const stored = await server.request('PUT', `${T}/artifacts/${path}`, { body, contentType });
    assert.ok(stored.status === 201 || stored.status === 200, stored.text);
  }

  it('an HTML artifact comes with CSP sandbox, nosniff and as an attachment', async () => {
    await put('report/page.html', 'text/html; charset=utf-8', HTML);
    const got = await server.request('GET', `${T}/artifacts/report/page.html`, { token: null });
    assert.equal(got.status, 200);
    assert.equal(got.text, HTML, 'the bytes are unchanged');
    const csp = got.headers.get('content-security-policy') ?? '';
    assert.match(csp, /(^|;)\s*sandbox(\s*;|$)/, `CSP ${csp || '(none)'} sandboxes the document`);
    assert.doesNotMatch(csp, /allow-scripts|allow-same-origin/);
    assert.match(csp, /default-src 'none'/);
    assert.equal(got.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(got.headers.get('content-disposition'), "attachment; filename*=UTF-8''page.html");
    // A 304 for a cached copy carries them too.
    const cached = await server.request('GET', `${T}/artifacts/report/page.html`, {
      token: null,
      headers: { 'if-none-match': got.headers.get('etag') ?? '' },
    });
    assert.equal(cached.status, 304);
    assert.equal(cached.headers.get('content-security-policy'), csp);
  });

  it('active types are attachments; passive ones are shown inline, all sandboxed', async () => {
    const active = [
      ['a.svg', 'image/svg+xml'],
      ['a.xhtml', 'application/xhtml+xml'],
      ['a.xml', 'text/xml'],
      ['a.js', 'text/javascript'],
      ['a.pdf', 'application/pdf'],
      ['a.bin', 'application/x-unknown'],
      ['upper.html', 'TEXT/HTML'],
    ];
    const passive = [
      ['a.png', 'image/png'],
      ['a.txt', 'text/plain; charset=utf-8'],
      ['a.json', 'application/json'],
    ];
    for (const [path, type] of [...active, ...passive] as [string, string][]) {
      await put(`kinds/${path}`, type, '"x"');
      const got = await server.request('GET', `${T}/artifacts/kinds/${path}`, { token: null });
      assert.equal(got.status, 200);
      assert.equal(got.headers.get('content-security-policy'), "sandbox; default-src 'none'");
      assert.equal(got.headers.get('x-content-type-options'), 'nosniff');
      const disposition = got.headers.get('content-disposition');
      if (active.some(([name]) => name === path)) {
        assert.match(disposition ?? '', /^attachment;/, `${type} is an attachment`);
      } else {
        assert.equal(disposition, null, `${type} is shown inline`);
      }
    }
  });

  it('what the sandboxed page could send (Origin: null) changes nothing', async () => {
    // A sandboxed document has an opaque origin: a browser sends its requests with
    // `Origin: null`, which the cross-site check refuses. This is what the page's script
    // would attempt if a browser ran it despite the attachment.
    const before = await storeSnapshot(server.store);
    const attempt = await server.request('POST', '/v1/tenants', {
      token: null,
      body: { name: 'pwned' },
      headers: { origin: 'null', 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(attempt.status, 403, attempt.text);
    assert.equal(attempt.body.error.code, 'CROSS_SITE_REQUEST');
    assert.equal(await storeSnapshot(server.store), before);
  });
});
