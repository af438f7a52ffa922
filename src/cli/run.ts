// The `keel` dispatcher: one file per command, usage errors exit 2, errors exit 1.

import {
  BACKUP_HELP,
  BACKUP_USAGE,
  RESTORE_HELP,
  RESTORE_USAGE,
  backupCommand,
  restoreCommand,
} from './backup.ts';
import { CHAT_USAGE, chatCommand } from './chat.ts';
import { DEMO_USAGE, demoCommand } from './demo.ts';
import { exitCodeFor, UsageError } from './errors.ts';
import { FIXTURE_MODEL_HELP, FIXTURE_MODEL_USAGE, fixtureModelCommand } from './fixture-model.ts';
import { MCP_USAGE, SECRETS_USAGE, mcpCommand, secretsCommand } from './mcp.ts';
import { WASM_USAGE, wasmCommand } from './wasm.ts';
import { MEMORY_USAGE, memoryCommand } from './memory.ts';
import { MIGRATE_USAGE, migrateCommand } from './migrate.ts';
import {
  EXPORT_HELP,
  EXPORT_USAGE,
  IMPORT_HELP,
  IMPORT_USAGE,
  exportCommand,
  importCommand,
} from './tenant-transfer.ts';
import { RUNS_USAGE, runsCommand } from './runs.ts';
import { APPROVALS_USAGE, approvalsCommand } from './approvals.ts';
import { SERVE_USAGE, serveCommand } from './serve.ts';
import {
  AGENT_USAGE,
  TENANT_USAGE,
  TOKEN_USAGE,
  agentCommand,
  tenantCommand,
  tokenCommand,
} from './setup.ts';
import { TURN_USAGE, turnCommand } from './turn.ts';
import { AGENTS_USAGE, agentsCommand } from './agents.ts';
import { ARTIFACTS_USAGE, artifactsCommand } from './artifacts.ts';
import { DELIVERIES_USAGE, deliveriesCommand } from './deliveries.ts';
import { SCHEDULES_USAGE, schedulesCommand } from './schedules.ts';
import { THREADS_USAGE, threadsCommand } from './threads.ts';

type Command = (argv: string[]) => Promise<number>;

/** `help`, when given, follows the usage line in `keel <command> --help`. */
const COMMANDS: Record<string, { run: Command; usage: string; about: string; help?: string }> = {
  serve: { run: serveCommand, usage: SERVE_USAGE, about: 'run the API and workers' },
  migrate: { run: migrateCommand, usage: MIGRATE_USAGE, about: 'apply schema migrations' },
  backup: {
    run: backupCommand,
    usage: BACKUP_USAGE,
    about: 'copy the SQLite store to a file while keel serves',
    help: BACKUP_HELP,
  },
  restore: {
    run: restoreCommand,
    usage: RESTORE_USAGE,
    about: 'put a backup in place (keel stopped)',
    help: RESTORE_HELP,
  },
  export: {
    run: exportCommand,
    usage: EXPORT_USAGE,
    about: "write one tenant's data to a file (holds its secrets)",
    help: EXPORT_HELP,
  },
  import: {
    run: importCommand,
    usage: IMPORT_USAGE,
    about: 'write an exported tenant into this store, in one transaction',
    help: IMPORT_HELP,
  },
  memory: {
    run: memoryCommand,
    usage: MEMORY_USAGE,
    about: 'facts: list, get, put, rm, search; reindex after an embedder change',
  },
  demo: { run: demoCommand, usage: DEMO_USAGE, about: 'the self-contained tour (no keys needed)' },
  'fixture-model': {
    run: fixtureModelCommand,
    usage: FIXTURE_MODEL_USAGE,
    about: 'the deterministic OpenAI-compatible test model',
    help: FIXTURE_MODEL_HELP,
  },
  turn: { run: turnCommand, usage: TURN_USAGE, about: 'submit a turn' },
  chat: { run: chatCommand, usage: CHAT_USAGE, about: 'interactive terminal channel on one scope' },
  runs: { run: runsCommand, usage: RUNS_USAGE, about: 'inspect and control runs' },
  approvals: {
    run: approvalsCommand,
    usage: APPROVALS_USAGE,
    about: 'tool calls waiting for a person: list, approve, deny',
  },
  tenant: { run: tenantCommand, usage: TENANT_USAGE, about: 'create a tenant' },
  token: { run: tokenCommand, usage: TOKEN_USAGE, about: 'create a tenant token' },
  agent: { run: agentCommand, usage: AGENT_USAGE, about: 'create or replace an agent' },
  agents: { run: agentsCommand, usage: AGENTS_USAGE, about: "a tenant's agents" },
  threads: { run: threadsCommand, usage: THREADS_USAGE, about: "an agent's conversations" },
  schedules: { run: schedulesCommand, usage: SCHEDULES_USAGE, about: "a tenant's schedules" },
  artifacts: { run: artifactsCommand, usage: ARTIFACTS_USAGE, about: "a tenant's artifacts" },
  deliveries: { run: deliveriesCommand, usage: DELIVERIES_USAGE, about: "a tenant's outbox" },
  mcp: { run: mcpCommand, usage: MCP_USAGE, about: "a tenant's MCP servers and their tools" },
  wasm: { run: wasmCommand, usage: WASM_USAGE, about: "a tenant's WebAssembly tools" },
  secrets: {
    run: secretsCommand,
    usage: SECRETS_USAGE,
    about: "a tenant's secrets (names only out)",
  },
};

export function usage(): string {
  // Padded to the longest name, so a long one (fixture-model) never runs into its text.
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2;
  const lines = Object.entries(COMMANDS).map(
    ([name, command]) => `  ${name.padEnd(width)}${command.about}\n      ${command.usage}`,
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
      process.stdout.write(`usage: ${command.usage}\n${command.help ? `\n${command.help}\n` : ''}`);
      return 0;
    }
    return await command.run(rest);
  } catch (error) {
    return exitCodeFor(error, writeError);
  }
}
