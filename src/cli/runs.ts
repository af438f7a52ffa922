// `keel runs [list|show <id>|trace <id>|cancel <id>|fork <id>]`: inspect, control and
// fork runs.

import { parseCommand } from './args.ts';
import { createClient } from './client.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';

export const RUNS_USAGE = `keel runs [list [--agent A] [--scope S] [--status S] [--limit N] | show <id> | trace <id> | cancel <id> [--reason R] | fork <id> --at-step N [--text T] [--scope S]] ${CLIENT_USAGE}`;

type Print = (text: string) => void;

export async function runsCommand(
  argv: string[],
  print: Print = (text) => process.stdout.write(text),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...CLIENT_OPTIONS,
    agent: { type: 'string' },
    scope: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    reason: { type: 'string' },
    'at-step': { type: 'string' },
    text: { type: 'string' },
  });
  const [action = 'list', id] = positionals;
  const client = createClient(loadClientConfig(values));
  const runPath = (suffix = ''): string => {
    if (!id) throw new UsageError(`runs ${action} needs a run id`);
    return client.tenantPath(`/runs/${encodeURIComponent(id)}${suffix}`);
  };
  switch (action) {
    case 'list': {
      const query = new URLSearchParams();
      for (const key of ['agent', 'scope', 'status', 'limit'] as const) {
        const value = values[key];
        if (value !== undefined) query.set(key, value);
      }
      const page = await client.request(
        'GET',
        client.tenantPath(`/runs${query.size > 0 ? `?${query}` : ''}`),
      );
      for (const run of page.runs as Record<string, unknown>[]) {
        print(
          `${run.run_id}  ${String(run.status).padEnd(9)}  ${run.agent}  ${JSON.stringify(run.scope)}  ${run.created_at}\n`,
        );
      }
      if (page.next_cursor)
        print(`(more: --cursor is not needed here; narrow with --agent/--scope/--status)\n`);
      return 0;
    }
    case 'show':
      print(`${JSON.stringify((await client.request('GET', runPath())).run, null, 2)}\n`);
      return 0;
    case 'trace': {
      let after = 0;
      for (;;) {
        const page = await client.request('GET', runPath(`/trace?after=${after}`));
        const events = page.events as { seq: number; ts: string; type: string; data: unknown }[];
        for (const event of events)
          print(`${event.seq}\t${event.ts}\t${event.type}\t${JSON.stringify(event.data)}\n`);
        if (events.length < 1000) return 0;
        after = events[events.length - 1]?.seq ?? after;
      }
    }
    case 'cancel': {
      const result = await client.request(
        'POST',
        runPath('/cancel'),
        values.reason ? { reason: values.reason } : {},
      );
      print(`${result.run.run_id} ${result.run.status}\n`);
      return 0;
    }
    case 'fork': {
      const atStep = values['at-step'];
      if (atStep === undefined || !/^\d+$/.test(atStep)) {
        throw new UsageError('runs fork needs --at-step N (a whole number)');
      }
      const result = await client.request('POST', runPath('/fork'), {
        at_step: Number(atStep),
        ...(values.text !== undefined && { payload: { text: values.text } }),
        ...(values.scope !== undefined && { scope: values.scope }),
      });
      print(`${result.run_id} ${result.status} ${JSON.stringify(result.scope)}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown runs action "${action}"`);
  }
}
