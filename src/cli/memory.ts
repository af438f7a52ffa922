// `keel memory reindex` (this file) and `keel memory list|get|put|rm|search` (the facts
// over the API, memory-facts.ts). `reindex` re-embeds every fact whose vector was made by another embedder
// than the configured one, in batches, each batch one transaction. Resumable by
// construction: an interrupted run leaves finished batches done, and running it again
// picks up exactly the facts that are still stale. Progress goes to stderr.
// It takes the data-dir lock, so it refuses while a server owns the data dir.

import { loadServerConfig, parseCommand, SERVER_OPTIONS } from './args.ts';
import { UsageError } from './errors.ts';
import { MEMORY_FACTS_USAGE, memoryFactsCommand } from './memory-facts.ts';

export const MEMORY_USAGE = `keel memory reindex [--batch-size N] [--config FILE] [--data-dir DIR] [--store-url URL] | ${MEMORY_FACTS_USAGE.replace(/^keel memory /, '')}`;

const FACT_ACTIONS = new Set(['list', 'ls', 'get', 'put', 'rm', 'search']);

export async function memoryCommand(
  argv: string[],
  print: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  progress: (text: string) => void = (text) => process.stderr.write(text),
): Promise<number> {
  const first = argv.find((arg) => !arg.startsWith('-'));
  if (first !== undefined && FACT_ACTIONS.has(first))
    return memoryFactsCommand(argv, (text) => process.stdout.write(text));
  const { values, positionals } = parseCommand(argv, {
    ...SERVER_OPTIONS,
    'batch-size': { type: 'string' },
  });
  const [action, ...rest] = positionals;
  if (action !== 'reindex')
    throw new UsageError(
      `memory: expected reindex, list, get, put, rm or search, got "${action ?? ''}"`,
    );
  if (rest.length > 0) throw new UsageError(`memory reindex takes no arguments: ${rest[0]}`);
  const batchSize = values['batch-size'] === undefined ? 256 : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new UsageError('--batch-size: expected an integer 1–10000');
  }
  const config = await loadServerConfig(values);
  // Loaded here, not at the top: every `keel` command imports this file's usage line.
  const { inertFailpoints } = await import('../failpoints.ts');
  const { openStore } = await import('../main.ts');
  const { createEmbedder, embedderProvider } = await import('../memory/embedders/create.ts');
  const { createMemoryService } = await import('../memory/service.ts');
  // Reindexing calls the embedder's provider (if it has one): its key, as keel serve does.
  const embedding = embedderProvider(config.memory.embedder);
  if (embedding !== null) {
    const { assertProviderKeys } = await import('../providers/provider-keys.ts');
    assertProviderKeys(config.providers, config.provider_keys, [embedding]);
  }
  const { store } = await openStore(config, inertFailpoints);
  try {
    const memory = createMemoryService({ store, embedder: createEmbedder(config) });
    const started = Date.now();
    const report = await memory.reindex({
      batchSize,
      onProgress: (done, total) =>
        progress(`\rmemory reindex (${memory.embedderId}): ${done}/${total}`),
    });
    if (report.stale > 0) progress('\n');
    print(
      `reindexed ${report.reindexed} of ${report.stale} facts for embedder ${report.embedder} in ${Date.now() - started} ms; ${report.remaining} still stale`,
    );
    return report.remaining === 0 ? 0 : 1;
  } finally {
    await store.close();
  }
}
