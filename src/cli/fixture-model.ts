// `keel fixture-model --listen 127.0.0.1:PORT`: the deterministic fixture model as an
// OpenAI-compatible server (providers/fixture-server.ts) until SIGTERM/SIGINT.

import { describeFixtureDirectives } from '../providers/fixture-directives.ts';
import { parseCommand } from './args.ts';
import { UsageError } from './errors.ts';

export const FIXTURE_MODEL_USAGE = `keel fixture-model [--listen 127.0.0.1:PORT] [--chunk-delay-ms N]`;

/** `keel fixture-model --help`: the usage line and every directive (docs/fixture-model.md). */
export const FIXTURE_MODEL_HELP = `The fixture model answers from directives in the latest user message, each on its own
line (other lines are the text it echoes):
${describeFixtureDirectives()}
e.g. keel turn assistant s1 $'what time is it?\\n@call clock_now {}\\n@stream 3' --stream`;

export async function fixtureModelCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    listen: { type: 'string' },
    'chunk-delay-ms': { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`fixture-model takes no arguments: ${positionals[0]}`);
  // Loaded here, not at the top: every `keel` command imports this file's usage line.
  const { isLoopbackHost, parseListen } = await import('../config.ts');
  const { startFixtureServer } = await import('../providers/fixture-server.ts');
  const { host, port } = parseListen(values.listen ?? '127.0.0.1:8090');
  // A test model answers anyone without a key: keep it on loopback.
  if (!isLoopbackHost(host))
    throw new UsageError('fixture-model listens on loopback only (127.0.0.1, ::1)');
  const chunkDelayMs = Number(values['chunk-delay-ms'] ?? 0);
  if (!Number.isInteger(chunkDelayMs) || chunkDelayMs < 0)
    throw new UsageError('--chunk-delay-ms: expected a whole number');
  const server = await startFixtureServer({ host, port, chunkDelayMs });
  process.stdout.write(
    `fixture model listening on ${server.url} (OpenAI-compatible base URL ${server.url}/v1)\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await server.close();
  return 0;
}
