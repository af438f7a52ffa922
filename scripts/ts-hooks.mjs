// The module hooks that let the test processes import keel's TypeScript directly, in
// place of tsx's (scripts/ts-register.mjs registers them). Measured on the 2-core
// machine, a test process importing keel's modules spends about 0.5 s less CPU with
// these than with tsx: they only load — a `.ts` file under file: becomes JavaScript,
// everything else goes to Node's own loader untouched — where tsx also resolves every
// specifier itself (tsconfig paths, extension probing), which this code base never
// needs: every relative import names its `.ts` file (tsconfig's
// allowImportingTsExtensions), and Node resolves those on its own.
//
// A file is compiled once by esbuild (types stripped; the code reprinted, its behaviour
// unchanged) with tsconfig.json's compilerOptions, and kept under
// node_modules/.cache/keel/ts/, keyed by its path, its content, those options and
// esbuild's version: an edit or a new setting gets a new key, so the cache is never
// stale. Inline source maps without the sources (Node reads the .ts file when it prints
// an error's line): stack traces name the .ts lines.
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';

let cacheDir = '';
let compile = {};
/** What the key holds besides the file: the options and the compiler's version. */
let settings = '';
/** Loaded on the first file not yet in the cache. */
let esbuild = null;

export function initialize({ cache, tsconfig }) {
  cacheDir = cache;
  mkdirSync(cacheDir, { recursive: true });
  const { compilerOptions } = JSON.parse(readFileSync(tsconfig, 'utf8'));
  compile = {
    loader: 'ts',
    format: 'esm',
    // Whatever syntax this Node runs (import attributes and the like) passes through.
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcesContent: false,
    tsconfigRaw: { compilerOptions },
  };
  const { version } = createRequire(import.meta.url)('esbuild/package.json');
  settings = `${version}\0${JSON.stringify(compile)}`;
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = readFileSync(path, 'utf8');
  const key = createHash('sha256').update(`${settings}\0${path}\0`).update(source).digest('hex');
  const cached = join(cacheDir, `${key.slice(0, 32)}.js`);
  try {
    return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  } catch {
    // Not compiled yet: below.
  }
  esbuild ??= await import('esbuild');
  const { code } = await esbuild.transform(source, { ...compile, sourcefile: path });
  // Written aside and renamed, under a name no other process or thread uses: a reader
  // never sees half a file. A cache that cannot be written costs only the next compile.
  const writing = `${cached}.${process.pid}.${threadId}.${randomUUID()}`;
  try {
    writeFileSync(writing, code);
    renameSync(writing, cached);
  } catch {
    rmSync(writing, { force: true });
  }
  return { format: 'module', source: code, shortCircuit: true };
}
