// How web_fetch turns bytes into text: content encodings a server sends although keel
// asked for identity (gzip, deflate, br, a gzip bomb), then the charset — a BOM, the
// Content-Type header, an HTML <meta> or an XML declaration (WHATWG order: BOM > header
// > prescan > UTF-8), windows-1252 (which iso-8859-1 means on the web), Japanese
// encodings, unknown labels, invalid bytes — HTML entities, and content types that are
// not text at all. Every body is sent as exact bytes by a fixture on 127.0.0.1, reached
// through allow_hosts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, createGzip, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import type { FetchedPage } from '../src/tools/builtin/web-port.ts';
import type { Fetcher } from '../src/web/fetcher.ts';
import { createFetcher } from '../src/web/fetcher.ts';
import type { RawHandler, RawServer } from './helpers/web-fixture.ts';
import {
  endless,
  pipeChunked,
  startRawServer,
  writeHead,
  writeResponse,
} from './helpers/web-fixture.ts';

const CAP = 64 * 1024;
/** Far below the fetcher's 5 s hop timeout: a capped read must not wait for a deadline. */
const PROMPT_MS = 2000;
const TEXT = { 'content-type': 'text/plain; charset=utf-8' };
const COMPRESSED_TEXT = 'compressed café, '.repeat(50);

const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(
    parts.map((part) =>
      typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part),
    ),
  );
const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
const SHIFT_JIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]; // 日本語
const EUC_JP_NIHONGO = [0xc6, 0xfc, 0xcb, 0xdc, 0xb8, 0xec]; // 日本語
const UTF8_BOM = [0xef, 0xbb, 0xbf];
const html = (head: string, body: string): string =>
  `<!doctype html><html><head>${head}<title>T</title></head><body><p>${body}</p></body></html>`;

interface Case {
  name: string;
  contentType: string | null;
  body: Buffer;
  text?: string;
  title?: string | null;
}

const CASES: Case[] = [
  {
    name: 'iso-8859-1 is decoded as windows-1252, as browsers do (0xE9 é, 0x80 €)',
    contentType: 'text/plain; charset=iso-8859-1',
    body: bytes('caf', [0xe9], ' ', [0x80], '5'),
    text: 'café €5',
  },
  {
    name: 'windows-1252 maps 0x80–0x9F to its printable characters',
    contentType: 'text/plain; charset=windows-1252',
    body: bytes([0x80, 0x91, 0x92, 0x93, 0x94, 0x96, 0x97, 0x99, 0x9f, 0x81, 0xe9]),
    text: '€‘’“”–—™Ÿ\u0081é',
  },
  {
    name: 'Shift_JIS Japanese',
    contentType: 'text/plain; charset=Shift_JIS',
    body: bytes(SHIFT_JIS_NIHONGO),
    text: '日本語',
  },
  {
    name: 'EUC-JP Japanese, quoted charset parameter',
    contentType: 'text/plain; charset="EUC-JP"',
    body: bytes(EUC_JP_NIHONGO),
    text: '日本語',
  },
  {
    name: 'an unknown charset falls back to UTF-8',
    contentType: 'text/plain; charset=x-no-such-charset',
    body: utf8('naïve'),
    text: 'naïve',
  },
  {
    name: 'an unparseable charset parameter falls back to UTF-8',
    contentType: 'text/plain; charset=%%%; format=flowed',
    body: utf8('naïve'),
    text: 'naïve',
  },
  {
    name: 'invalid UTF-8 bytes become U+FFFD, the rest survives',
    contentType: 'text/plain; charset=utf-8',
    body: bytes('a', [0xff], 'b', [0xc3], '(', [0xed, 0xa0, 0x80], 'c'),
    text: 'a\ufffdb\ufffd(\ufffd\ufffd\ufffdc',
  },
  {
    name: 'a UTF-8 BOM is dropped',
    contentType: 'text/plain; charset=utf-8',
    body: bytes(UTF8_BOM, utf8('hello').toString('latin1')),
    text: 'hello',
  },
  {
    name: 'a UTF-8 BOM wins over the header charset',
    contentType: 'text/plain; charset=windows-1252',
    body: Buffer.concat([Buffer.from(UTF8_BOM), utf8('café')]),
    text: 'café',
  },
  {
    name: 'a UTF-16LE BOM without a header charset',
    contentType: 'text/plain',
    body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi é', 'utf16le')]),
    text: 'hi é',
  },
  {
    name: 'no Content-Type at all is read as UTF-8 text',
    contentType: null,
    body: utf8('plain é'),
    text: 'plain é',
  },
  {
    name: 'HTML <meta charset="windows-1252"> without a header charset',
    contentType: 'text/html',
    body: bytes(html('<meta charset="windows-1252">', 'caf\xe9 \x80'), ''),
    text: 'café €',
  },
  {
    name: 'HTML <meta http-equiv="Content-Type" content="…; charset=iso-8859-1">',
    contentType: 'text/html',
    body: bytes(
      html('<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">', '\xe9t\xe9'),
    ),
    text: 'été',
  },
  {
    name: 'HTML meta matched case-insensitively and unquoted',
    contentType: 'text/html',
    body: bytes(html('<META CHARSET=Shift_JIS>', ''), SHIFT_JIS_NIHONGO),
    text: '日本語',
  },
  {
    name: 'HTML: the header charset wins over the meta',
    contentType: 'text/html; charset=utf-8',
    body: utf8(html('<meta charset="windows-1252">', 'café')),
    text: 'café',
  },
  {
    name: 'HTML: an unknown header charset is ignored, the meta decides',
    contentType: 'text/html; charset=x-bogus',
    body: bytes(html('<meta charset="windows-1252">', 'caf\xe9')),
    text: 'café',
  },
  {
    name: 'HTML: a meta inside a comment is not a declaration',
    contentType: 'text/html',
    body: utf8(html('<!-- <meta charset="windows-1252"> -->', 'café')),
    text: 'café',
  },
  {
    name: 'HTML: a meta after the first 1024 bytes is not looked at',
    contentType: 'text/html',
    body: bytes(
      `<html><head><title>T</title><style>${' '.repeat(1100)}</style>`,
      '<meta charset="windows-1252"></head><body>caf\xc3\xa9',
    ),
    text: 'café',
  },
  {
    name: 'HTML: a meta naming UTF-16 means UTF-8 (the bytes were ASCII-compatible)',
    contentType: 'text/html',
    body: utf8(html('<meta charset="utf-16">', 'café')),
    text: 'café',
  },
  {
    name: 'XML: the encoding of the declaration when the header names none',
    contentType: 'application/xml',
    body: bytes('<?xml version="1.0" encoding="ISO-8859-1"?><a>caf\xe9</a>'),
    text: '<?xml version="1.0" encoding="ISO-8859-1"?><a>café</a>',
  },
  {
    name: 'HTML entities: named, decimal, hex, astral, windows-1252 references, invalid',
    contentType: 'text/html; charset=utf-8',
    body: utf8(
      html(
        '',
        'caf&eacute; &#233; &#xE9; &#x1F600; &Eacute;t&eacute; &frac12; &amp;lt; &#150; &#0; &unknown; &hearts;',
      ),
    ),
    text: 'café é é 😀 Été ½ &lt; – \ufffd &unknown; ♥',
  },
  {
    name: 'HTML entities in the title',
    contentType: 'text/html; charset=utf-8',
    body: utf8('<html><head><title>Caf&eacute; &amp; &#x2603;</title></head><body>x</body></html>'),
    title: 'Café & ☃',
    text: 'x',
  },
];

const REFUSED: [string, string][] = [
  ['/refused/png', 'image/png'],
  ['/refused/octet-stream', 'application/octet-stream'],
  ['/refused/pdf', 'application/pdf'],
];

describe('web_fetch decoding', () => {
  let server: RawServer;
  let fetcher: Fetcher;
  let capped: Fetcher;
  const routes: Record<string, RawHandler> = {};
  CASES.forEach((testCase, index) => {
    routes[`/case/${index}`] = (socket) => {
      const headers: Record<string, string> =
        testCase.contentType === null ? {} : { 'content-type': testCase.contentType };
      writeResponse(socket, 200, headers, testCase.body);
    };
  });
  for (const [path, contentType] of REFUSED) {
    routes[path] = (socket) =>
      writeResponse(socket, 200, { 'content-type': contentType }, Buffer.alloc(4 * 1024 * 1024));
  }
  let lastAcceptEncoding: string | undefined;
  routes['/plain'] = (socket, request) => {
    lastAcceptEncoding = request.headers['accept-encoding'];
    writeResponse(socket, 200, TEXT, 'plain');
  };
  const compressed = (encoding: string, body: Buffer): RawHandler => {
    return (socket) => writeResponse(socket, 200, { ...TEXT, 'content-encoding': encoding }, body);
  };
  const endlessGzip = (source: Buffer, gzipped: boolean): RawHandler => {
    return (socket) => {
      const headers = { ...TEXT, 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' };
      writeHead(socket, 200, headers);
      pipeChunked(socket, gzipped ? endless(source) : endless(source).pipe(createGzip()));
    };
  };
  Object.assign(routes, {
    '/gzip': compressed('gzip', gzipSync(COMPRESSED_TEXT)),
    '/x-gzip': compressed('x-gzip', gzipSync(COMPRESSED_TEXT)),
    '/deflate': compressed('deflate', deflateSync(COMPRESSED_TEXT)),
    '/deflate-raw': compressed('deflate', deflateRawSync(COMPRESSED_TEXT)),
    '/br': compressed('br', brotliCompressSync(COMPRESSED_TEXT)),
    '/gzip-corrupt': compressed('gzip', Buffer.from('this is not gzip at all')),
    '/zstd': compressed('zstd', Buffer.from('(zstd frame)')),
    '/gzip-bomb': endlessGzip(Buffer.alloc(65_536), false),
    // Each member is valid gzip of nothing: endless input that decodes to nothing.
    '/gzip-empty-members': endlessGzip(
      Buffer.concat(Array.from({ length: 500 }, () => gzipSync(Buffer.alloc(0)))),
      true,
    ),
  } satisfies Record<string, RawHandler>);
  routes['/shift-jis-split'] = (socket) =>
    writeResponse(
      socket,
      200,
      { 'content-type': 'text/plain; charset=shift_jis' },
      bytes(SHIFT_JIS_NIHONGO),
    );

  before(async () => {
    server = await startRawServer(routes);
    fetcher = createFetcher({ allowHosts: ['127.0.0.1'], hopTimeoutMs: 5000 });
    capped = createFetcher({ allowHosts: ['127.0.0.1'], hopTimeoutMs: 5000, maxBytes: CAP });
  });
  after(async () => {
    await server.close();
  });

  async function fetchPage(path: string, target = fetcher): Promise<FetchedPage> {
    return target(server.url(path), new AbortController().signal);
  }

  describe('content encodings (sent although keel asks for identity)', () => {
    it('keel asks for identity encoding', async () => {
      await fetchPage('/plain');
      assert.equal(lastAcceptEncoding, 'identity');
    });

    for (const path of ['/gzip', '/x-gzip', '/deflate', '/deflate-raw', '/br']) {
      it(`${path.slice(1)} is decoded`, async () => {
        const page = await fetchPage(path);
        assert.ok(page.text === COMPRESSED_TEXT, `decoded (${page.text.slice(0, 20)})`);
        assert.equal(page.truncated, false);
        assert.equal(await server.openSocketsAfter(), 0);
      });
    }

    it('a gzip bomb (endless zeros) is cut at the cap on the decoded size', async () => {
      const started = performance.now();
      const page = await fetchPage('/gzip-bomb', capped);
      assert.equal(page.text.length, CAP);
      assert.match(page.text, /^\u0000+$/);
      assert.equal(page.truncated, true);
      assert.ok(performance.now() - started < PROMPT_MS, 'stopped at the cap');
      assert.equal(await server.openSocketsAfter(), 0);
    });

    it('endless compressed input that decodes to nothing is cut at the cap on the wire', async () => {
      const started = performance.now();
      const page = await fetchPage('/gzip-empty-members', capped);
      assert.equal(page.text, '');
      assert.equal(page.truncated, true);
      assert.ok(performance.now() - started < PROMPT_MS, 'stopped at the cap');
      assert.equal(await server.openSocketsAfter(), 0);
    });

    it('a corrupt gzip body is WEB_FETCH_FAILED; an unknown coding is WEB_CONTENT_TYPE', async () => {
      await assert.rejects(fetchPage('/gzip-corrupt'), { code: 'WEB_FETCH_FAILED' });
      await assert.rejects(fetchPage('/zstd'), { code: 'WEB_CONTENT_TYPE' });
      assert.equal(await server.openSocketsAfter(), 0);
    });
  });

  CASES.forEach((testCase, index) => {
    it(testCase.name, async () => {
      const page = await fetchPage(`/case/${index}`);
      if (testCase.text !== undefined) assert.equal(page.text, testCase.text);
      if (testCase.title !== undefined) assert.equal(page.title, testCase.title);
      assert.equal(page.truncated, false);
    });
  });

  it('a cap that cuts a two-byte Shift_JIS character keeps only whole characters', async () => {
    const capped = createFetcher({ allowHosts: ['127.0.0.1'], maxBytes: 5 });
    const page = await fetchPage('/shift-jis-split', capped);
    assert.equal(page.text, '日本');
    assert.equal(page.truncated, true);
  });

  for (const [path, contentType] of REFUSED) {
    it(`${contentType} is refused with WEB_CONTENT_TYPE without reading the body`, async () => {
      await assert.rejects(fetchPage(path), (error: { code?: string; message?: string }) => {
        assert.equal(error.code, 'WEB_CONTENT_TYPE');
        assert.match(error.message ?? '', new RegExp(contentType.replace('/', '\\/')));
        return true;
      });
      assert.equal(await server.openSocketsAfter(), 0);
    });
  }
});
