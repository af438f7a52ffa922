// `npm test`'s checks — type check, lint, format check — each one single-threaded process,
// side by side. Each one's output is printed whole when it ends (not interleaved); the
// exit code is non-zero if any failed.
//
//   node scripts/checks.mjs                      the checks alone
//   node scripts/checks.mjs -- <command…>        the checks beside <command> (npm test:
//                                                the test runner)
//
// Beside a command the checks run at a lower CPU priority (nice 10): the test step keeps
// both cores busy but for its waits, and the checks fill those instead of delaying the
// tests (on the 2-core machine the checks alone took ~60 s, a third of it with a core
// idle). Each check's result is printed on stderr when it ends, a failing one's output
// with it; the command's output passes through untouched; the exit code is non-zero if the
// command or any check failed.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

const CHECKS = ['typecheck', 'lint', 'format:check'];
const BESIDE_PRIORITY = 10;
// Under `npm test`, npm's own script through this Node (no shell, which Windows would need
// for npm.cmd); run by hand, the npm on the PATH.
const npmCli = process.env.npm_execpath;
const [command, prefix] = npmCli ? [process.execPath, [npmCli]] : ['npm', []];

const separator = process.argv.indexOf('--');
const beside = separator === -1 ? [] : process.argv.slice(separator + 1);
const report = beside.length > 0 ? process.stderr : process.stdout;

function runCheck(script) {
  return new Promise((resolve) => {
    const child = spawn(command, [...prefix, 'run', '--silent', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: !npmCli && process.platform === 'win32',
    });
    if (beside.length > 0 && child.pid !== undefined) {
      try {
        // Set before npm starts the check's own process, which inherits it.
        setPriority(child.pid, BESIDE_PRIORITY);
      } catch {
        // not permitted here: the checks compete at the same priority, only slower
      }
    }
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => {
      report.write(`checks: ${script} could not start: ${error.message}\n`);
      resolve(false);
    });
    child.on('close', (code, signal) => {
      const failed = code !== 0;
      report.write(`checks: ${script} ${failed ? `FAILED (${signal ?? code})` : 'ok'}\n`);
      if (failed || output.length > 0) report.write(Buffer.concat(output));
      resolve(!failed);
    });
  });
}

function runBeside([file, ...args]) {
  return new Promise((resolve) => {
    // `node` is this Node, as npm would run it.
    const child = spawn(file === 'node' ? process.execPath : file, args, { stdio: 'inherit' });
    child.on('error', (error) => {
      process.stderr.write(`checks: ${file} could not start: ${error.message}\n`);
      resolve(false);
    });
    child.on('close', (code) => resolve(code === 0));
  });
}

const checks = Promise.all(CHECKS.map(runCheck));
const besideOk = beside.length > 0 ? await runBeside(beside) : true;
const results = await checks;
if (beside.length > 0) {
  const failed = CHECKS.filter((_, index) => !results[index]);
  process.stderr.write(
    failed.length === 0
      ? `checks: ${CHECKS.join(', ')} ok\n`
      : `checks: FAILED ${failed.join(', ')} (output above)\n`,
  );
}
process.exit(besideOk && results.every(Boolean) ? 0 : 1);
