// `npm run openapi`: starts a whole keel (temp data dir, hash embedder, every optional
// API part on), reads the document it serves at /openapi.json and writes it to
// docs/openapi.json, the committed contract that test/openapi-compat.test.ts compares
// against. `npm run openapi -- --check` only reports whether the file is current.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import pino from 'pino';
import { format, resolveConfig } from 'prettier';
import { loadConfig } from '../src/config.ts';
import { startKeel } from '../src/main.ts';

export const DOCUMENT_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'docs',
  'openapi.json',
);

/** The document a default `keel serve` (memory, MCP and WebAssembly tools on) serves. */
export async function servedDocument(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-openapi-'));
  try {
    const configPath = join(dir, 'keel.toml');
    await writeFile(configPath, '[memory]\nembedder = "hash"\n');
    const config = loadConfig(
      { data_dir: dir, listen: '127.0.0.1:0', config: configPath },
      {},
      dir,
    );
    const keel = await startKeel(config, {
      logger: pino({ level: 'silent' }),
      shutdownGraceMs: 500,
    });
    try {
      const response = await fetch(`${keel.url}/openapi.json`);
      if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
      return (await response.json()) as Record<string, unknown>;
    } finally {
      await keel.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The committed text for a document: prettier's JSON, so `prettier --check` agrees. */
export async function documentText(document: unknown): Promise<string> {
  const options = await resolveConfig(DOCUMENT_PATH);
  return format(JSON.stringify(document), { ...options, filepath: DOCUMENT_PATH });
}

async function main(): Promise<void> {
  const document = await servedDocument();
  if (process.argv.includes('--check')) {
    const committed: unknown = JSON.parse(await readFile(DOCUMENT_PATH, 'utf8'));
    if (!isDeepStrictEqual(committed, document)) {
      console.error('docs/openapi.json is stale: run npm run openapi');
      process.exitCode = 1;
    } else console.log('docs/openapi.json is current');
    return;
  }
  await writeFile(DOCUMENT_PATH, await documentText(document));
  console.log(`wrote ${DOCUMENT_PATH}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
