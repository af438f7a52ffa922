// The fixture model's directives: the one list the parser (fixture-script.ts), the
// `keel fixture-model --help` text and docs/fixture-model.md are held to
// (test/fixture-directives.test.ts), so the three cannot drift apart. No imports: the
// CLI's help loads this file.

export interface FixtureDirective {
  /** The word after `@`. */
  name: string;
  /** How a line with it is written. */
  usage: string;
  effect: string;
}

export const FIXTURE_DIRECTIVES = [
  {
    name: 'call',
    usage: '@call <tool> <json>',
    effect: 'one tool call; the k-th `@call` line is the only call of step k',
  },
  {
    name: 'parallel',
    usage: '@parallel',
    effect: 'emit all `@call` lines as calls of one step instead',
  },
  {
    name: 'sleep',
    usage: '@sleep <ms>',
    effect: 'wait this long before every response (abortable: cancel lands mid-sleep)',
  },
  {
    name: 'fail',
    usage: '@fail <n> <status>',
    effect: 'answer the first n requests of this run with HTTP-style error `status` (retries)',
  },
  {
    name: 'reply',
    usage: '@reply <text>',
    effect: 'the final text (default: `echo: <the non-directive text>`)',
  },
  {
    name: 'json',
    usage: '@json <object>',
    effect: 'the final answer is this JSON object',
  },
  {
    name: 'stream',
    usage: '@stream <n>',
    effect: 'stream the final text in n chunks (`model.delta` events)',
  },
  {
    name: 'forever',
    usage: '@forever',
    effect: 'keep calling `clock_now` every step (for max_steps and cancel)',
  },
  {
    name: 'overflow',
    usage: '@overflow <n>',
    effect: 'answer HTTP 400 "context length exceeded" while the input is over n tokens',
  },
] as const satisfies readonly FixtureDirective[];

export type FixtureDirectiveName = (typeof FIXTURE_DIRECTIVES)[number]['name'];

/** The directives as aligned text lines, for `--help`. */
export function describeFixtureDirectives(indent = '  '): string {
  const width = Math.max(...FIXTURE_DIRECTIVES.map((directive) => directive.usage.length)) + 2;
  return FIXTURE_DIRECTIVES.map(
    (directive) =>
      `${indent}${directive.usage.padEnd(width)}${directive.effect.replaceAll('`', '')}`,
  ).join('\n');
}
