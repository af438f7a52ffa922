import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startKeel } from '../../src/main.ts';
import { setUpKeel } from '../turns/keel-setup.ts';

const dir = mkdtempSync(join(tmpdir(), 'keel-calls-'));
const loaded = loadConfig({ data_dir: dir, listen: '127.0.0.1:0' }, {}, dir);
const keel = await startKeel(
  { ...loaded, memory: { ...loaded.memory, embedder: 'hash' } },
  { logger: pino({ level: 'silent' }) },
);
await setUpKeel(keel.url, 'fixture/bench');
const counts = new Map<string, number>();
const store = keel.store as unknown as Record<string, unknown>;
let proto = Object.getPrototypeOf(store);
const names = new Set<string>();
while (proto && proto !== Object.prototype) {
  for (const n of Object.getOwnPropertyNames(proto)) names.add(n);
  proto = Object.getPrototypeOf(proto);
}
for (const name of names) {
  if (name === 'constructor' || typeof store[name] !== 'function') continue;
  const original = (store[name] as (...a: unknown[]) => unknown).bind(store);
  store[name] = (...args: unknown[]) => {
    let key = name;
    if (name === 'appendProgress') {
      const p = args[1] as {
        entries?: { kind: string }[];
        events?: { type: string }[];
        steps?: number;
        usage?: unknown;
      };
      key += ` [${(p.entries ?? []).map((e) => e.kind).join(',')}] {${(p.events ?? []).map((e) => e.type).join(',')}}${p.steps !== undefined ? ' steps' : ''}${p.usage ? ' usage' : ''}`;
    }
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original(...args);
  };
}
const text = process.argv[2] ?? '@call clock_now {}';
const turns = 20;
for (let i = 0; i < turns; i++) {
  const r = await fetch(`${keel.url}/v1/tenants/bench/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'agent', scope: `s-${i % 5}`, payload: { text } }),
  });
  const { run_id } = (await r.json()) as { run_id: string };
  await (await fetch(`${keel.url}/v1/tenants/bench/runs/${run_id}/wait?timeout_ms=60000`)).text();
}
await new Promise((r) => setTimeout(r, 200));
console.log(
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([n, c]) => `${(c / turns).toFixed(2)} ${n}`)
    .join('\n'),
);
await keel.stop();
process.exit(0);
