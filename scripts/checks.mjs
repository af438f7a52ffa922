// `npm test`'s checks before the tests — type check, lint, format check — side by side:
// each is one single-threaded process, so on two cores they take about half the time of
// one after another. Each one's output is printed whole when it ends (not interleaved);
// the exit code is non-zero if any failed.
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'format:check'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(script) {
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code, signal) => {
      const failed = code !== 0;
      process.stdout.write(`checks: ${script} ${failed ? `FAILED (${signal ?? code})` : 'ok'}\n`);
      if (failed || output.length > 0) process.stdout.write(Buffer.concat(output));
      resolve(!failed);
    });
  });
}

const results = await Promise.all(CHECKS.map(run));
process.exit(results.every(Boolean) ? 0 : 1);
