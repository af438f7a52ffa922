// `keel mcp list|put|rm|tools` and `keel secrets put|list|rm`: a tenant's MCP servers
// and secrets over the HTTP API (docs/mcp.md). A secret's value is read from stdin, never
// from the command line (argv is visible to every user of the machine).

import { text } from 'node:stream/consumers';
import { parseCommand } from './args.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { everyItem } from './every-page.ts';
import { UsageError } from './errors.ts';
import { connect } from './keel.ts';

export const MCP_USAGE = `keel mcp [list | tools <name> | rm <name> | put <name> (--server DECLARED | --url URL [--header NAME=SECRET]…) [--allow TOOL]… [--disabled]] ${CLIENT_USAGE}`;
export const SECRETS_USAGE = `keel secrets [list | put <name> (value on stdin) | rm <name>] ${CLIENT_USAGE}`;

type Print = (text: string) => void;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

function transportOf(values: { server?: string; url?: string; header?: string[] }) {
  if ((values.server === undefined) === (values.url === undefined)) {
    throw new UsageError('mcp put: give exactly one of --server (declared stdio) or --url (HTTP)');
  }
  if (values.server !== undefined) {
    if (values.header) throw new UsageError('mcp put: --header goes with --url');
    return { type: 'stdio', server: values.server };
  }
  const headers: Record<string, string> = {};
  for (const pair of values.header ?? []) {
    const [name, secret] = pair.split('=', 2);
    if (!name || !secret) throw new UsageError(`--header: expected NAME=SECRET, got "${pair}"`);
    headers[name] = secret;
  }
  return {
    type: 'http',
    url: values.url,
    ...(Object.keys(headers).length > 0 && { headers_from: headers }),
  };
}

/** The name of the item an action needs; `missing` when none was given. */
function named(name: string | undefined, missing: string): string {
  if (!name) throw new UsageError(missing);
  return name;
}

function printTools(server: Loose, print: Print): void {
  for (const tool of server.tools as Loose[]) {
    print(
      `${tool.name}\t${tool.effect}\t${tool.allowed ? 'allowed' : 'not allowed'}\t${tool.description}\n`,
    );
  }
}

export async function mcpCommand(
  argv: string[],
  print: Print = (line) => process.stdout.write(line),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...CLIENT_OPTIONS,
    server: { type: 'string' },
    url: { type: 'string' },
    header: { type: 'string', multiple: true },
    allow: { type: 'string', multiple: true },
    disabled: { type: 'boolean' },
  });
  const [action = 'list', name] = positionals;
  const { keel, tenant } = connect(loadClientConfig(values));
  const serverName = (): string => named(name, `mcp ${action} needs a server name`);
  switch (action) {
    case 'list': {
      const servers = await everyItem(
        (cursor) => keel.mcp.list(tenant, cursor ? { cursor } : {}),
        'servers',
      );
      for (const server of servers as Loose[]) {
        const where =
          server.transport.type === 'stdio'
            ? `stdio:${server.transport.server}`
            : server.transport.url;
        const state = server.enabled ? 'enabled' : 'disabled';
        const error = server.last_error ? `\tlast_error: ${server.last_error}` : '';
        print(`${server.name}\t${state}\t${where}\t${server.tools.length} tools${error}\n`);
      }
      return 0;
    }
    case 'tools':
      printTools(await keel.mcp.get(tenant, serverName()), print);
      return 0;
    case 'put': {
      const body = {
        enabled: values.disabled !== true,
        transport: transportOf(values),
        ...(values.allow && { allowed_tools: values.allow }),
      };
      const server: Loose = await keel.mcp.put(tenant, serverName(), body as Loose);
      print(`mcp server ${server.name} saved (${server.tools.length} tools)\n`);
      printTools(server, print);
      return 0;
    }
    case 'rm':
      await keel.mcp.delete(tenant, serverName());
      print(`mcp server ${name} removed\n`);
      return 0;
    default:
      throw new UsageError(`mcp: expected list, tools, put or rm, got "${action}"`);
  }
}

export async function secretsCommand(
  argv: string[],
  print: Print = (line) => process.stdout.write(line),
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  const { values, positionals } = parseCommand(argv, { ...CLIENT_OPTIONS });
  const [action = 'list', name] = positionals;
  const { keel, tenant } = connect(loadClientConfig(values));
  const secretName = (): string => named(name, `secrets ${action} needs a secret name`);
  switch (action) {
    case 'list': {
      const secrets = await everyItem(
        (cursor) => keel.secrets.list(tenant, cursor ? { cursor } : {}),
        'secrets',
      );
      for (const secret of secrets as Loose[]) print(`${secret.name}\t${secret.updated_at}\n`);
      return 0;
    }
    case 'put': {
      const secret = secretName();
      // One trailing newline (from `echo` or a file) is not part of the value.
      const value = (await text(stdin)).replace(/\r?\n$/, '');
      if (value === '')
        throw new UsageError('secrets put: the value is read from stdin; it was empty');
      const saved = await keel.secrets.put(tenant, secret, { value });
      print(`secret ${name} ${saved.created ? 'created' : 'replaced'}\n`);
      return 0;
    }
    case 'rm':
      await keel.secrets.delete(tenant, secretName());
      print(`secret ${name} removed\n`);
      return 0;
    default:
      throw new UsageError(`secrets: expected list, put or rm, got "${action}"`);
  }
}
