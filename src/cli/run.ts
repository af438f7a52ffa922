// The `keel` dispatcher: one file per command, usage errors exit 2, errors exit 1.

import { exitCodeFor, UsageError } from './errors.ts';
import { MIGRATE_USAGE, migrateCommand } from './migrate.ts';
import { SERVE_USAGE, serveCommand } from './serve.ts';

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { run: Command; usage: string; about: string }> = {
  serve: { run: serveCommand, usage: SERVE_USAGE, about: 'run the API and workers' },
  migrate: { run: migrateCommand, usage: MIGRATE_USAGE, about: 'apply schema migrations' },
};

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(
    ([name, command]) => `  ${name.padEnd(10)}${command.about}\n      ${command.usage}`,
  );
  return `usage: keel <command> [flags]\n\ncommands:\n${lines.join('\n')}`;
}

export async function runCli(
  argv: string[],
  writeError: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  try {
    if (!command) throw new UsageError(`unknown command "${name}"`);
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`usage: ${command.usage}\n`);
      return 0;
    }
    return await command.run(rest);
  } catch (error) {
    return exitCodeFor(error, writeError);
  }
}
