// The docs name files as they are: every `src/…` or `test/…` path written in README.md or
// docs/*.md exists in the repository (files get renamed and merged; a newcomer following
// docs/architecture.md must land on real files). Globs (`*`) are not checked.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const PATH = /(?<![\w./-])(?:src|test)\/[\w./-]*[\w/]/g;

/** The src/ and test/ paths `text` names that do not exist under `root`. */
export function missingPaths(text: string, root: string): string[] {
  const missing = new Set<string>();
  for (const match of text.matchAll(PATH)) {
    const path = match[0];
    // A glob such as src/store/sqlite/memory*.ts names no one file.
    if (text[match.index + path.length] === '*') continue;
    if (!existsSync(join(root, path))) missing.add(path);
  }
  return [...missing];
}

function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...docs];
}

describe('file paths named in the docs', () => {
  it('finds a renamed file and passes globs and real files', () => {
    const text = 'see `src/runtime/tool-step.ts`, `src/runtime/tool-loop.ts` and `src/store/*.ts`';
    assert.deepEqual(missingPaths(text, ROOT), ['src/runtime/tool-loop.ts']);
  });

  it('every src/ and test/ path in README.md and docs/*.md exists', () => {
    const missing = docFiles().flatMap((file) =>
      missingPaths(readFileSync(join(ROOT, file), 'utf8'), ROOT).map((path) => `${file}: ${path}`),
    );
    const named = docFiles().flatMap((file) => [
      ...readFileSync(join(ROOT, file), 'utf8').matchAll(PATH),
    ]).length;
    console.log(`checked ${named} src/ and test/ paths in ${docFiles().length} documents`);
    assert.deepEqual(missing, []);
  });
});
