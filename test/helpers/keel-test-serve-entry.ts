// How tests start the test entry keel-test-serve.ts (cwd: the repository root). When
// dist/ was built from exactly these sources (keel-cli.ts), the entry and the test
// helpers it loads are compiled once to JavaScript under node_modules/.cache/keel/
// and run without tsx, importing keel's compiled modules: about 1 s less CPU per
// start, which the crash tests pay dozens of times. Else the .ts entry runs through tsx.
//
// One copy of keel's modules either way: the compiled helpers sit beside a `src` link
// to dist/, so their `../../src/X.js` imports are dist/X.js (node follows the link),
// the very modules dist's own imports load — a ToolError or KeelError a helper throws
// is the class keel checks. The compiled entry lives only in that cache, never in
// dist/ nor in what an installed keel runs.
//
//   spawn(process.execPath, [...KEEL_TEST_SERVE, '--listen', …], { cwd: ROOT })

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import type * as TypeScript from 'typescript';
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
 * Compiles the entry into the cache and returns its path. Keyed on dist/'s stamp and
 * every test helper, so the compiler loads only after one of them changed.
 */
function compiledEntry(): string {
  const hash = createHash('sha256').update(readFileSync(join(ROOT, 'dist/.build-stamp')));
  const helpers = join(ROOT, 'test/helpers');
  for (const name of readdirSync(helpers).sort()) {
    if (name.endsWith('.ts')) hash.update(`\0${name}\0`).update(readFileSync(join(helpers, name)));
  }
  const cache = join(ROOT, 'node_modules/.cache/keel');
  const dir = join(cache, `test-serve-${hash.digest('hex').slice(0, 16)}`);
  const entry = join(dir, ENTRY.replace(/\.ts$/, '.js'));
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
  try {
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(entry)) throw error;
  }
  return entry;
}

export const KEEL_TEST_SERVE: readonly string[] = builtFromTheseSources()
  ? [compiledEntry()]
  : ['--import', 'tsx', ENTRY];
