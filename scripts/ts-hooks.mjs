// The module hooks that let the test processes import keel's TypeScript directly, in
// place of tsx's (scripts/ts-register.mjs registers them). Measured on the 2-core
// machine, a test process importing keel's modules spends about 0.5 s less CPU with
// these than with tsx: they only load — a `.ts` file under file: becomes JavaScript,
// everything else goes to Node's own loader untouched — where tsx also resolves every
// specifier itself (tsconfig paths, extension probing), which this code base never
// needs: every relative import names its `.ts` file (tsconfig's
// allowImportingTsExtensions), and Node resolves those on its own.
//
// A file is compiled once by esbuild (types stripped, nothing else changed) and kept
// under node_modules/.cache/keel/ts/, keyed by its path and content; an edited file
// gets a new key, so the cache is never stale. Inline source maps: stack traces name
// the .ts lines.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What esbuild needs of tsconfig.json to emit what tsc would. */
const COMPILE = {
  loader: 'ts',
  format: 'esm',
  target: 'node20',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { target: 'ES2022', verbatimModuleSyntax: true } },
};

let cacheDir = '';
/** Loaded on the first file not yet in the cache. */
let esbuild = null;

export function initialize({ cache }) {
  cacheDir = cache;
  mkdirSync(cacheDir, { recursive: true });
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = readFileSync(path, 'utf8');
  const key = createHash('sha256').update(path).update('\0').update(source).digest('hex');
  const cached = join(cacheDir, `${key.slice(0, 32)}.js`);
  try {
    return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  } catch {
    // Not compiled yet: below.
  }
  esbuild ??= await import('esbuild');
  const { code } = await esbuild.transform(source, { ...COMPILE, sourcefile: path });
  // Written aside and renamed: processes compiling the same file at once never read half.
  const writing = `${cached}.${process.pid}`;
  writeFileSync(writing, code);
  renameSync(writing, cached);
  return { format: 'module', source: code, shortCircuit: true };
}
