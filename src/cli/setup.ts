// Setup without curl: `keel tenant create <name>`, `keel token create <tenant> <name>`,
// `keel agent put <name> <file.toml>`.

import { readFile } from 'node:fs/promises';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { parseCommand } from './args.ts';
import { UsageError } from './errors.ts';
import { connect } from './keel.ts';

export const TENANT_USAGE = `keel tenant create <name> ${CLIENT_USAGE}`;
export const TOKEN_USAGE = `keel token create <tenant> <name> ${CLIENT_USAGE}`;
export const AGENT_USAGE = `keel agent put <name> <file.toml|file.json> ${CLIENT_USAGE}`;

type Print = (text: string) => void;
const stdout: Print = (text) => process.stdout.write(text);

function parse(argv: string[]) {
  return parseCommand(argv, CLIENT_OPTIONS);
}

export async function tenantCommand(argv: string[], print: Print = stdout): Promise<number> {
  const { values, positionals } = parse(argv);
  const [action, name] = positionals;
  if (action !== 'create' || !name) throw new UsageError(`usage: ${TENANT_USAGE}`);
  const { keel } = connect(loadClientConfig(values));
  const result = await keel.tenants.create({ name });
  print(`tenant ${result.tenant.name} ready\n`);
  return 0;
}

export async function tokenCommand(argv: string[], print: Print = stdout): Promise<number> {
  const { values, positionals } = parse(argv);
  const [action, tenant, name] = positionals;
  if (action !== 'create' || !tenant || !name) throw new UsageError(`usage: ${TOKEN_USAGE}`);
  const { keel } = connect(loadClientConfig({ ...values, tenant }));
  const result = await keel.tenants.mintToken(tenant, { name });
  // The token is shown once; it goes to stdout alone on its line so scripts can take it.
  print(`${result.token}\n`);
  return 0;
}

export async function agentCommand(argv: string[], print: Print = stdout): Promise<number> {
  const { values, positionals } = parse(argv);
  const [action, name, file] = positionals;
  if (action !== 'put' || !name || !file) throw new UsageError(`usage: ${AGENT_USAGE}`);
  const body = await readFile(file, 'utf8');
  const connection = connect(loadClientConfig(values));
  const contentType = file.endsWith('.json') ? 'application/json' : 'application/toml';
  const result = await connection.keel.agents.putText(connection.tenant, name, body, contentType);
  print(`agent ${result.agent.name} (${result.agent.model}) saved\n`);
  return 0;
}
