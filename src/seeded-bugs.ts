// Seeded bugs: test-only switches that each break one guarantee on purpose, so the
// checks guarding it can be shown to fail (docs/reliability.md, "Seeded bugs"). Nothing
// in a production process can turn one on: the config does not read them; only code
// that calls startKeel or a store's open function passes them (the tests, and the
// test-only entry test/helpers/keel-test-serve.ts).

import { KeelError } from './errors.ts';

/** Broken by the store (both backends). */
export const STORE_SEEDED_BUGS = ['no_fencing', 'split_finalize'] as const;
export type StoreSeededBug = (typeof STORE_SEEDED_BUGS)[number];

/** Broken by the run loop. */
export const RUNTIME_SEEDED_BUGS = ['entries_at_end'] as const;

export const SEEDED_BUGS = [...STORE_SEEDED_BUGS, ...RUNTIME_SEEDED_BUGS] as const;
export type SeededBug = (typeof SEEDED_BUGS)[number];

/** Validates names; an unknown one is refused (a typo must not pass as "no bug"). */
export function checkSeededBugs(names: readonly string[]): SeededBug[] {
  const unknown = names.filter((name) => !(SEEDED_BUGS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new KeelError(
      'CONFIG_INVALID',
      `unknown seeded bug ${unknown.map((name) => `"${name}"`).join(', ')} (known: ${SEEDED_BUGS.join(', ')})`,
    );
  }
  return names as SeededBug[];
}

/** "a,b" → checked names; "" → none. */
export function parseSeededBugs(text: string): SeededBug[] {
  return checkSeededBugs(
    text
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
}
