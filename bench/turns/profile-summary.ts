// `tsx bench/turns/profile-summary.ts <file.cpuprofile> [top] [skip s]`: where a V8 CPU
// profile's samples went — self time per function and per package/source folder, in
// percent — leaving out the first `skip` seconds (startup, before the load began), or with
// a negative `skip`, keeping only the last -skip seconds (the measured load ends the run).

import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const [file = '', topText = '40', skipText = '0'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<number, number>();
let elapsedUs = 0;
const totalUs = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
const skip = Number(skipText);
const skipUs = skip >= 0 ? skip * 1e6 : totalUs + skip * 1e6;
profile.samples.forEach((id, index) => {
  elapsedUs += profile.timeDeltas[index] ?? 0;
  if (elapsedUs < skipUs) return;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
let total = 0;
const perFunction = new Map<string, number>();
const perArea = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === '(idle)') continue;
  total += us;
  const short = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'nm:');
  const key = `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
  perFunction.set(key, (perFunction.get(key) ?? 0) + us);
  const area = short.startsWith('nm:')
    ? short
        .split('/')
        .slice(0, short.startsWith('nm:@') ? 2 : 1)
        .join('/')
    : short.includes('/src/')
      ? `src/${short.split('/src/')[1]?.split('/').slice(0, -1).join('/') ?? ''}`
      : short || functionName;
  perArea.set(area, (perArea.get(area) ?? 0) + us);
}
const top = Number(topText);
const print = (title: string, map: Map<string, number>): void => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled, not idle)`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`);
};
print('by area', perArea);
print('by function (self)', perFunction);
