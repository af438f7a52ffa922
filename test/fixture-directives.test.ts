// The fixture model's directives are one list (src/providers/fixture-directives.ts):
// the parser reads exactly those, docs/fixture-model.md documents exactly those (usage
// and effect, row by row), and `keel fixture-model --help` prints every one of them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { FIXTURE_DIRECTIVES } from '../src/providers/fixture-directives.ts';
import { parseFixtureScript } from '../src/providers/fixture-script.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;

/** The directive table of docs/fixture-model.md as [usage, effect] pairs. */
function documentedRows(): [string, string][] {
  const doc = readFileSync(`${ROOT}docs/fixture-model.md`, 'utf8');
  const rows: [string, string][] = [];
  for (const line of doc.split('\n')) {
    const match = /^\|\s*`(@[^`]+)`\s*\|\s*(.*?)\s*\|$/.exec(line);
    if (match?.[1] && match[2] !== undefined) rows.push([match[1], match[2]]);
  }
  return rows;
}

describe('fixture model directives', () => {
  it('the parser reads every listed directive and nothing else', () => {
    for (const directive of FIXTURE_DIRECTIVES) {
      const script = parseFixtureScript(`hello\n@${directive.name} 1 2`);
      assert.equal(script.text, 'hello', `@${directive.name} was taken as plain text`);
    }
    // A word that is not a directive stays text, so the list is the whole parser.
    for (const word of ['bogus', 'calls', 'streams', 'help'])
      assert.equal(parseFixtureScript(`@${word} 1`).text, `@${word} 1`);
  });

  it('docs/fixture-model.md has one row per directive with its usage and effect', () => {
    const rows = documentedRows();
    assert.deepEqual(
      rows.map(([usage]) => usage),
      FIXTURE_DIRECTIVES.map((directive) => directive.usage),
    );
    for (const directive of FIXTURE_DIRECTIVES) {
      const row = rows.find(([usage]) => usage === directive.usage);
      assert.equal(row?.[1], directive.effect, `the doc's effect of ${directive.usage}`);
    }
  });

  it('`keel fixture-model --help` lists every directive and the one-per-line rule', () => {
    const help = execFileSync(process.execPath, [...KEEL_CLI, 'fixture-model', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.match(help, /each on its own\s+line/);
    for (const directive of FIXTURE_DIRECTIVES) {
      const line = help.split('\n').find((text) => text.trim().startsWith(directive.usage));
      assert.ok(line, `--help misses ${directive.usage}:\n${help}`);
      assert.ok(line.includes(directive.effect.replaceAll('`', '')), line);
    }
  });

  it('README links the directive reference', () => {
    assert.match(readFileSync(`${ROOT}README.md`, 'utf8'), /\(docs\/fixture-model\.md\)/);
  });
});
