// Named fault points at transaction boundaries (docs/reliability.md, "Fault points").
// Inert unless a test injects them (the config never creates any: only
// test/helpers/keel-test-serve.ts and test code call createFailpoints with enabled),
// so production code pays one branch.
//
// Syntax: KEEL_FAILPOINTS="name=action;name=n*action" with actions kill, throw(msg),
// sleep(ms). `n*` fires only on the n-th hit of that point.

import { KeelError } from './errors.ts';

type Action = { kind: 'kill' } | { kind: 'throw'; message: string } | { kind: 'sleep'; ms: number };

interface Rule {
  action: Action;
  onlyHit: number | null;
}

export interface Failpoints {
  /** Synchronous on purpose: it may run inside a synchronous SQLite transaction. */
  hit(name: string): void;
}

export const inertFailpoints: Failpoints = { hit: () => undefined };

function parseAction(text: string): Action {
  if (text === 'kill') return { kind: 'kill' };
  const throwMatch = /^throw(?:\((.*)\))?$/.exec(text);
  if (throwMatch) return { kind: 'throw', message: throwMatch[1] ?? 'failpoint' };
  const sleepMatch = /^sleep\((\d+)\)$/.exec(text);
  if (sleepMatch) return { kind: 'sleep', ms: Number(sleepMatch[1]) };
  throw new KeelError('CONFIG_INVALID', `KEEL_FAILPOINTS: unknown action "${text}"`);
}

export function parseFailpoints(spec: string): Map<string, Rule> {
  const rules = new Map<string, Rule>();
  for (const part of spec
    .split(';')
    .map((piece) => piece.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0)
      throw new KeelError('CONFIG_INVALID', `KEEL_FAILPOINTS: expected name=action in "${part}"`);
    const name = part.slice(0, eq).trim();
    let actionText = part.slice(eq + 1).trim();
    let onlyHit: number | null = null;
    const countMatch = /^(\d+)\*(.*)$/.exec(actionText);
    if (countMatch) {
      onlyHit = Number(countMatch[1]);
      actionText = countMatch[2] as string;
    }
    rules.set(name, { action: parseAction(actionText), onlyHit });
  }
  return rules;
}

export function createFailpoints(options: { enabled: boolean; spec: string }): Failpoints {
  if (!options.enabled || options.spec === '') return inertFailpoints;
  const rules = parseFailpoints(options.spec);
  const hits = new Map<string, number>();
  return {
    hit(name: string): void {
      const rule = rules.get(name);
      if (!rule) return;
      const count = (hits.get(name) ?? 0) + 1;
      hits.set(name, count);
      if (rule.onlyHit !== null && rule.onlyHit !== count) return;
      switch (rule.action.kind) {
        case 'kill':
          process.kill(process.pid, 'SIGKILL');
          // SIGKILL is delivered asynchronously; block so no further line runs.
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
          return;
        case 'throw':
          throw new Error(`failpoint ${name}: ${rule.action.message}`);
        case 'sleep':
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, rule.action.ms);
          return;
      }
    },
  };
}
