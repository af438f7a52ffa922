// `npm test`'s checks before the tests — type check, lint, format check — side by side:
// each is one single-threaded process, so on two cores they take about half the time of
// one after another. Each one's output is printed whole when it ends (not interleaved);
// the exit code is non-zero if any failed.
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'format:check'];
// Under `npm test`, npm's own script through this Node (no shell, which Windows would need
// for npm.cmd); run by hand, the npm on the PATH.
const npmCli = process.env.npm_execpath;
const [command, prefix] = npmCli ? [process.execPath, [npmCli]] : ['npm', []];

function run(script) {
  return new Promise((resolve) => {
    const child = spawn(command, [...prefix, 'run', '--silent', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: !npmCli && process.platform === 'win32',
    });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => {
      process.stdout.write(`checks: ${script} could not start: ${error.message}\n`);
      resolve(false);
    });
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
