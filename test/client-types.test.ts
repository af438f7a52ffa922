// The typed client refuses a wrong request body at compile time. One tsc run checks
// test/fixtures/client-types/wrong-body.ts (its @ts-expect-error lines must all be errors:
// an unused directive fails) and a copy without the directives, which must have an error
// on exactly those lines and nowhere else.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..');

it('tsc refuses wrong request bodies of keel/client (and only those)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'keel-client-types-'));
  try {
    const fixture = join(root, 'test', 'fixtures', 'client-types', 'wrong-body.ts');
    const text = await readFile(fixture, 'utf8');
    const lines = text.split('\n');
    // The line after each directive is the one that must not compile (1-based).
    const expected = lines
      .map((line, index) => (line.trim().startsWith('// @ts-expect-error') ? index + 2 : 0))
      .filter((line) => line > 0);
    const stripped = join(dir, 'stripped.mts');
    await writeFile(
      stripped,
      text
        .replaceAll('// @ts-expect-error', '// (expected error)')
        .replace(/'[./]+\/src\/client\/index\.ts'/, `'${join(root, 'src', 'client', 'index.ts')}'`),
    );
    const config = join(dir, 'tsconfig.json');
    await writeFile(
      config,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: { typeRoots: [join(root, 'node_modules', '@types')] },
        files: [fixture, stripped],
        include: [],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const started = Date.now();
    const output = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', config], {
      cwd: root,
    }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    const errors = output.split('\n').filter((line) => line.includes('error TS'));
    const inFixture = errors.filter((line) => line.includes('wrong-body.ts('));
    const strippedLines = [
      ...new Set(
        errors.map((line) => Number(/stripped\.mts\((\d+),/.exec(line)?.[1] ?? 0)).filter(Boolean),
      ),
    ].sort((a, b) => a - b);
    console.log(
      `# tsc in ${Date.now() - started} ms: ${strippedLines.length} refused calls (expected ${expected.length})`,
    );
    assert.deepEqual(inFixture, [], 'every @ts-expect-error is an error');
    const elsewhere = errors.filter((line) => !line.includes('stripped.mts('));
    assert.deepEqual(elsewhere, [], 'no other file has errors');
    assert.deepEqual(strippedLines, expected, output);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
