// How tests start the test entry keel-test-serve.ts (cwd: the repository root). When
// dist/ was built from exactly these sources (keel-cli.ts), the entry and the test
// helpers it loads are compiled once to JavaScript under node_modules/.cache/keel/ and
// bundled with keel's compiled modules and packages (scripts/bundle.mjs, as the build
// bundles `keel`), run without tsx: ~0.8 s of CPU per start against ~1.3 s unbundled
// and ~2 s through tsx, which the crash tests pay dozens of times. Else the .ts entry
// runs through tsx.
//
// One copy of keel's modules either way: the compiled helpers sit beside a `src` link
// to dist/, so their `../../src/X.js` imports are dist/X.js, the very modules dist's
// own imports name, and the bundle holds each once — a ToolError or KeelError a helper
// throws is the class keel checks. The compiled entry lives only in that cache, never
// in dist/ nor in what an installed keel runs.
//
//   spawn(process.execPath, [...KEEL_TEST_SERVE, '--listen', …], { cwd: ROOT })

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import type * as TypeScript from 'typescript';
import { bundle } from '../../scripts/bundle.mjs';
import { builtFromTheseSources } from './keel-cli.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const ENTRY = 'test/helpers/keel-test-serve.ts';

/** The entry and every test file it imports (relative .ts imports outside src/). */
function testFiles(ts: typeof TypeScript): Map<string, string> {
  const files = new Map<string, string>();
  const pending = [ENTRY];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    const source = readFileSync(join(ROOT, file), 'utf8');
    files.set(file, source);
    for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
      if (!fileName.startsWith('.') || !fileName.endsWith('.ts')) continue;
      const imported = relative(ROOT, resolve(ROOT, dirname(file), fileName));
      if (!imported.startsWith('src/')) pending.push(imported);
    }
  }
  return files;
}

/**
 * Compiles and bundles the entry into the cache and returns its path. Keyed on dist/'s
 * stamp, the bundler's script and every test helper, so the compiler loads only after
 * one of them changed.
 */
async function compiledEntry(): Promise<string> {
  const hash = createHash('sha256')
    .update(readFileSync(join(ROOT, 'dist/.build-stamp')))
    .update(readFileSync(join(ROOT, 'scripts/bundle.mjs')));
  const helpers = join(ROOT, 'test/helpers');
  for (const name of readdirSync(helpers).sort()) {
    if (name.endsWith('.ts')) hash.update(`\0${name}\0`).update(readFileSync(join(helpers, name)));
  }
  const cache = join(ROOT, 'node_modules/.cache/keel');
  const dir = join(cache, `test-serve-${hash.digest('hex').slice(0, 16)}`);
  const entry = join(dir, 'bundle', ENTRY.replace(/^.*\//, '').replace(/\.ts$/, '.js'));
  if (existsSync(entry)) return entry;
  const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
  const files = testFiles(ts);
  // Built aside and renamed into place: test files running at once never see half of it.
  const building = `${dir}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  symlinkSync(join(ROOT, 'dist'), join(building, 'src'), 'dir');
  for (const [file, source] of files) {
    const { outputText } = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        rewriteRelativeImportExtensions: true,
        verbatimModuleSyntax: true,
      },
    });
    const out = join(building, file.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
  // One bundle of the entry, its helpers and keel's modules they reach (scripts/bundle.mjs):
  // a start of about half the CPU, and still one copy of each module.
  const metafile = await bundle({
    entry: join(building, ENTRY.replace(/\.ts$/, '.js')),
    outdir: join(building, 'bundle'),
  });
  if (metafile === null) throw new Error('keel-test-serve-entry: esbuild is not installed');
  // What went into the bundle, for test/keel-test-serve-entry.test.ts.
  writeFileSync(join(building, 'metafile.json'), JSON.stringify(metafile));
  try {
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(entry)) throw error;
  }
  return entry;
}

export const KEEL_TEST_SERVE: readonly string[] = builtFromTheseSources()
  ? [await compiledEntry()]
  : ['--import', 'tsx', ENTRY];
