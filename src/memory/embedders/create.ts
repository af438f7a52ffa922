// Turns `[memory] embedder = "…"` into an Embedder. Called by main.ts and the CLI only:
// nothing else creates embedders, so there is exactly one per process.

import type { KeelConfig } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import { KeelError } from '../../errors.ts';
import type { Embedder } from './embedder.ts';
import { createGloveSifEmbedder, stderrBuildProgress } from './glove-sif.ts';
import { createHashEmbedder } from './hash.ts';
import { createOnnxEmbedder } from './onnx.ts';
import { createOpenAiEmbedder } from './openai.ts';
import { join } from 'node:path';

const EMBEDDER_FORMS = 'glove-sif, hash, openai:<provider>/<model>, onnx:<dir>';

export type EmbedderConfig = Pick<KeelConfig, 'data_dir' | 'providers' | 'provider_keys'> & {
  memory: Pick<KeelConfig['memory'], 'embedder'>;
};

/** The provider an `openai:<provider>/<model>` embedder calls; null for the others. */
export function embedderProvider(spec: string): string | null {
  return /^openai:([^/]+)\/./.exec(spec)?.[1] ?? null;
}

function invalid(message: string): KeelError {
  return new KeelError('CONFIG_INVALID', `memory.embedder: ${message}`);
}

export function createEmbedder(
  config: EmbedderConfig,
  options: { onBuildProgress?: (fraction: number) => void } = {},
): Embedder {
  const spec = config.memory.embedder;
  if (spec === 'glove-sif') {
    return createGloveSifEmbedder({
      cacheDir: join(config.data_dir, 'cache'),
      onBuildProgress: options.onBuildProgress ?? stderrBuildProgress(),
    });
  }
  if (spec === 'hash') return createHashEmbedder();
  if (spec.startsWith('openai:')) {
    const match = /^openai:([^/]+)\/(.+)$/.exec(spec);
    if (!match) throw invalid(`expected "openai:<provider>/<model>", got "${spec}"`);
    const [, provider, model] = match as unknown as [string, string, string];
    // Own entries only: a provider named "constructor" must not find Object.prototype's.
    const declared = Object.hasOwn(config.providers, provider)
      ? config.providers[provider]
      : undefined;
    if (!declared) throw invalid(`provider "${provider}" is not declared in [providers]`);
    const baseUrl =
      declared.base_url ?? (declared.type === 'openai' ? 'https://api.openai.com/v1' : undefined);
    if (!baseUrl) throw invalid(`provider "${provider}" has no base_url`);
    const apiKey = config.provider_keys[provider];
    return createOpenAiEmbedder({ provider, model, baseUrl, ...(apiKey ? { apiKey } : {}) });
  }
  if (spec.startsWith('onnx:')) {
    const dir = spec.slice('onnx:'.length);
    if (dir.length === 0) throw invalid('expected "onnx:<dir>"');
    try {
      return createOnnxEmbedder(dir);
    } catch (error) {
      throw invalid((error as Error).message);
    }
  }
  throw invalid(`unknown embedder "${spec}"; expected one of ${EMBEDDER_FORMS}`);
}

/**
 * Starts the embedder's warm-up without waiting for it (keel serve at a terminal): the
 * log says it started and how long it took; a failure is logged and the first memory
 * call tries again.
 */
export function prepareInBackground(
  embedder: Embedder,
  logger: Pick<Logger, 'info' | 'warn'>,
): void {
  if (!embedder.warm) return;
  const started = Date.now();
  logger.info({ embedder: embedder.id }, 'memory embedder: preparing in the background');
  embedder.warm().then(
    () =>
      logger.info({ embedder: embedder.id, ms: Date.now() - started }, 'memory embedder: ready'),
    (error: unknown) =>
      logger.warn(
        { embedder: embedder.id, error: String(error) },
        'memory embedder could not be prepared; the first memory call tries again',
      ),
  );
}
