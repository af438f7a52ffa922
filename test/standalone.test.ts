// The project stands on its own: no file of the repository cites a document outside it
// (a design note, a spec folder, another checkout's path). Every contract the code relies
// on lives in docs/. Relative paths (`../…`) are resolved against the citing file and
// must stay inside the repository.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const SELF = relative(ROOT, new URL(import.meta.url).pathname);
const SCANNED = ['src', 'docs', 'test', 'bench', 'scripts', 'README.md', 'eslint.config.js'];
const TEXT = /\.(ts|mjs|js|md|sql|json|toml)$/;

/** Citations of documents that are not in the repository. */
const OUTSIDE: { name: string; pattern: RegExp }[] = [
  { name: 'the design note', pattern: /\bDESIGN\.md\b/ },
  { name: 'a spec file', pattern: /(?<![\w/.-])spec\/[\w-]+\.md\b/ },
  { name: 'a reference note', pattern: /(?<![\w/.-])references\/[\w-]+\.md\b/ },
  { name: 'the shared folder', pattern: /(?<![\w/.-])shared\/(?:references|spec|DESIGN)\b/ },
  { name: 'an absolute checkout path', pattern: /\/work\/(?:shared|main|wt-)/ },
];

function collect(path: string): string[] {
  if (!statSync(path).isDirectory()) return TEXT.test(path) ? [path] : [];
  return readdirSync(path)
    .filter((name) => name !== 'node_modules' && !name.startsWith('.'))
    .flatMap((name) => collect(join(path, name)));
}

/** Every place in `text` that cites something outside the repository. */
export function outsideReferences(file: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    for (const { name, pattern } of OUTSIDE) {
      if (pattern.test(line)) found.push(`${where}: ${name}: ${line.trim()}`);
    }
    for (const match of line.matchAll(/(?<![\w.])((?:\.\.\/)+)/g)) {
      const target = resolve(dirname(join(ROOT, file)), match[1] as string);
      if (target !== ROOT && !target.startsWith(ROOT + sep)) {
        found.push(`${where}: a path that leaves the repository: ${line.trim()}`);
      }
    }
  });
  return found;
}

describe('the repository stands on its own', () => {
  it('the checker sees each kind of outside citation and accepts inside ones', () => {
    const bad = [
      '// see DESIGN.md §9',
      '// the rule of spec/http-api.md',
      '// summarised in shared/references/providers.md',
      '// (references/providers.md §3.3)',
      "// read('/work/shared/spec/memory.md')",
      "import x from '../../../x.ts';",
    ];
    for (const line of bad) {
      assert.equal(outsideReferences('src/api/x.ts', line).length, 1, line);
    }
    const good = [
      '// the rule of docs/http-api.md',
      "import { KeelError } from '../../errors.ts';",
      '// schedule-tools-shared.ts and src/store/shared/rules.ts',
      '// a test spec/name that is not a file',
    ];
    for (const line of good) {
      assert.deepEqual(outsideReferences('src/api/routes/x.ts', line), [], line);
    }
  });

  it('no file in src/, docs/, test/, bench/, scripts/ or the README cites one outside', () => {
    const found = SCANNED.map((entry) => join(ROOT, entry))
      .flatMap(collect)
      .map((path) => relative(ROOT, path))
      .filter((file) => file !== SELF)
      .flatMap((file) => outsideReferences(file, readFileSync(join(ROOT, file), 'utf8')));
    assert.deepEqual(found, [], `outside references:\n${found.join('\n')}`);
  });
});
