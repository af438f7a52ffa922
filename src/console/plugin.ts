// The web console (docs/console.md): `GET /` is its HTML shell, `GET /console/*` its
// browser modules and styles, and `/console/vendor/*` preact, its hooks and htm taken
// from the installed packages. Everything is read once, when the API is built, and each
// file is compressed once per encoding, on the first request that accepts it (brotli 11
// costs over half a second of CPU for all files: paid by a keel whose console is opened,
// not by every start, and on zlib's thread pool, so runs and streams served meanwhile are
// not held up); requests are answered from memory and only for the names listed
// here, so no request path ever reaches the file system.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KeelError } from '../errors.ts';

const ASSETS_DIR = new URL('./assets/', import.meta.url).pathname;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Scripts, styles and fetches only from this origin; no inline script, no frames, no
 * forms posting elsewhere. `connect-src 'self'` keeps a token from leaving for another host.
 */
const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

type Encoding = 'br' | 'gzip';

interface Asset {
  type: string;
  etag: string;
  identity: Buffer;
  /**
   * The compressed body, started off the event loop on the first call for that encoding;
   * the promise is kept, so concurrent first requests share one compression.
   */
  encoded(encoding: Encoding): Promise<Buffer>;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

function compress(identity: Buffer, encoding: Encoding): Promise<Buffer> {
  if (encoding === 'gzip') return gzipAsync(identity, { level: 9 });
  return brotliAsync(identity, {
    params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: identity.length },
  });
}

function asset(name: string, text: string): Asset {
  const identity = Buffer.from(text, 'utf8');
  const extension = name.slice(name.lastIndexOf('.'));
  const compressed = new Map<Encoding, Promise<Buffer>>();
  return {
    type: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    identity,
    encoded(encoding) {
      let body = compressed.get(encoding);
      if (!body) {
        body = compress(identity, encoding);
        compressed.set(encoding, body);
        // A failed compression is not kept: the next request tries again.
        body.catch(() => compressed.delete(encoding));
      }
      return body;
    },
  };
}

/** The directory of an installed package, found the way Node finds it. */
function packageDir(require: NodeRequire, name: string): string {
  const main = require.resolve(name);
  return main.slice(
    0,
    main.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length,
  );
}

/**
 * The ES module builds of the installed packages. preact's hooks import the bare name
 * "preact"; in the browser that is the sibling file.
 */
function vendorFiles(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const read = (name: string, file: string) =>
    readFileSync(join(packageDir(require, name), file), 'utf8').replace(
      /\/\/# sourceMappingURL=\S+\s*$/,
      '',
    );
  return {
    'vendor/preact.mjs': read('preact', 'dist/preact.mjs'),
    'vendor/hooks.mjs': read('preact', 'hooks/dist/hooks.mjs').replaceAll(
      'from"preact"',
      'from"./preact.mjs"',
    ),
    'vendor/htm.mjs': read('htm', 'dist/htm.mjs'),
    // The SSE parser of the console's reader (the package the server side also uses).
    'vendor/eventsource-parser.mjs': read('eventsource-parser', 'dist/index.js'),
  };
}

function ownFiles(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const name = `${prefix}${entry.name}`;
    if (entry.isDirectory()) Object.assign(files, ownFiles(join(dir, entry.name), `${name}/`));
    else if (/\.(js|css|html)$/.test(entry.name)) {
      files[name] = readFileSync(join(dir, entry.name), 'utf8');
    }
  }
  return files;
}

/** Reads the console's files once; the map is all the plugin will ever serve. */
export function loadConsoleAssets(): Map<string, Asset> {
  const files = { ...ownFiles(ASSETS_DIR), ...vendorFiles() };
  return new Map(Object.entries(files).map(([name, text]) => [name, asset(name, text)]));
}

function encodingFor(request: FastifyRequest): Encoding | null {
  const accepted = String(request.headers['accept-encoding'] ?? '');
  if (/\bbr\b/.test(accepted)) return 'br';
  if (/\bgzip\b/.test(accepted)) return 'gzip';
  return null;
}

async function send(
  request: FastifyRequest,
  reply: FastifyReply,
  file: Asset,
): Promise<FastifyReply> {
  void reply
    .type(file.type)
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .header('etag', file.etag)
    .header('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const encoding = encodingFor(request);
  if (encoding === null) return reply.send(file.identity);
  const body = await file.encoded(encoding);
  return reply.header('content-encoding', encoding).send(body);
}

export function consoleRoutes(app: FastifyInstance, assets: Map<string, Asset>): void {
  const hidden = { hide: true };
  const shell = assets.get('index.html');
  if (!shell) throw new Error('the console shell index.html is missing');

  app.get('/', { config: { auth: 'open' }, schema: hidden }, async (request, reply) =>
    send(request, reply, shell),
  );
  app.get<{ Params: { '*': string } }>(
    '/console/*',
    { config: { auth: 'open' }, schema: hidden },
    async (request, reply) => {
      const file = assets.get(request.params['*']);
      if (!file || request.params['*'] === 'index.html') {
        throw new KeelError('ROUTE_NOT_FOUND', `no console file ${request.params['*']}`);
      }
      return send(request, reply, file);
    },
  );
}
