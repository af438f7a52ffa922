// docs/providers.md stays true: every ```toml block in it is a keel.toml that keel's own
// config parser (loadConfig) accepts and whose providers keel can build
// (createConfiguredProviders: e.g. an openai-compatible entry without base_url fails
// there, not in the parser); the missing-key message it shows is the one keel prints;
// the default timeout it names is the one the providers use.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { isKeelError } from '../src/errors.ts';
import {
  createConfiguredProviders,
  DEFAULT_MODEL_TIMEOUT_MS,
} from '../src/providers/configured.ts';
import { assertProviderKeys } from '../src/providers/provider-keys.ts';

const DOC = readFileSync(new URL('../docs/providers.md', import.meta.url), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'keel-providers-docs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The text of every fenced block whose info string is exactly `lang`. */
export function fencedBlocks(markdown: string, lang: string): string[] {
  const blocks: string[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (const match of markdown.matchAll(fence)) {
    if (match[1]?.trim() === lang) blocks.push(match[2] ?? '');
  }
  return blocks;
}

/** loadConfig on `toml` as the keel.toml of a fresh directory, with `env`. */
function load(toml: string, env: NodeJS.ProcessEnv = {}) {
  const file = join(dir, `snippet-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(file, toml);
  return loadConfig({ config: file, data_dir: dir }, env, dir);
}

describe('docs/providers.md', () => {
  it('finds the fenced blocks of a language, and only those', () => {
    const text = '```toml\na = 1\n```\n\n```sh\necho\n```\n```toml\nb = 2\n```\n';
    assert.deepEqual(fencedBlocks(text, 'toml'), ['a = 1\n', 'b = 2\n']);
  });

  it('every toml snippet is a keel.toml keel parses, with providers keel builds', () => {
    const snippets = fencedBlocks(DOC, 'toml');
    assert.ok(snippets.length >= 4, `${snippets.length} toml snippets`);
    const types = new Set<string>();
    for (const [index, toml] of snippets.entries()) {
      const config = load(toml);
      const names = Object.keys(config.providers);
      assert.ok(names.length > 0, `snippet ${index + 1} declares no provider`);
      const built = createConfiguredProviders(config.providers, config.provider_keys);
      assert.deepEqual(Object.keys(built), names, `snippet ${index + 1}`);
      for (const provider of Object.values(config.providers)) types.add(provider.type);
    }
    // OpenAI, Anthropic and OpenAI-compatible (Ollama and others) each have a snippet.
    assert.deepEqual([...types].sort(), ['anthropic', 'openai', 'openai-compatible']);
    // Ollama's needs no key: it starts with an empty environment.
    const ollama = snippets.find((toml) => toml.includes('[providers.ollama]')) ?? '';
    const config = load(ollama);
    assertProviderKeys(config.providers, config.provider_keys, Object.keys(config.providers));
  });

  it('the missing-key message shown is the one keel gives; the default timeout is the real one', () => {
    const shown = /^keel: CONFIG_INVALID: (providers\.openai\..*)$/m.exec(DOC)?.[1];
    assert.ok(shown, 'docs/providers.md shows the missing-key message');
    const openai = fencedBlocks(DOC, 'toml').find((toml) => toml.includes('type = "openai"'));
    const config = load(openai ?? '');
    assert.throws(
      () => assertProviderKeys(config.providers, config.provider_keys, ['openai']),
      (error: unknown) => isKeelError(error, 'CONFIG_INVALID') && error.message === shown,
    );
    assert.match(DOC, new RegExp(`default ${DEFAULT_MODEL_TIMEOUT_MS} \\(10 minutes\\)`));
  });
});
