// `keel runs [list|show <id>|trace <id>|cancel <id>|fork <id>]`: inspect, control and
// fork runs.

import { parseCommand } from './args.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';
import { connect } from './keel.ts';
import type { Column } from './table.ts';
import { printList } from './table.ts';

export const RUNS_USAGE = `keel runs [list [--agent A] [--scope S] [--status S] [--limit N] [--cursor C] [--json] | show <id> | trace <id> | cancel <id> [--reason R] | fork <id> --at-step N [--text T] [--scope S]] ${CLIENT_USAGE}`;

type Print = (text: string) => void;

const RUN_COLUMNS: Column[] = [
  { title: 'RUN', value: (run) => run.run_id },
  { title: 'STATUS', value: (run) => run.status },
  { title: 'AGENT', value: (run) => run.agent },
  { title: 'SCOPE', value: (run) => run.scope },
  { title: 'CREATED', value: (run) => run.created_at },
];

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
    cursor: { type: 'string' },
    json: { type: 'boolean' },
    reason: { type: 'string' },
    'at-step': { type: 'string' },
    text: { type: 'string' },
  });
  const [action = 'list', id] = positionals;
  const { keel, tenant } = connect(loadClientConfig(values));
  const runId = (): string => {
    if (!id) throw new UsageError(`runs ${action} needs a run id`);
    return id;
  };
  switch (action) {
    case 'list': {
      const query: Record<string, string> = {};
      for (const key of ['agent', 'scope', 'status', 'limit', 'cursor'] as const) {
        const value = values[key];
        if (value !== undefined) query[key] = value;
      }
      const page = await keel.runs.list(tenant, query);
      printList(
        print,
        { items: page.runs, next_cursor: page.next_cursor, raw: page },
        { json: values.json === true, columns: RUN_COLUMNS, empty: 'no runs' },
      );
      return 0;
    }
    case 'show':
      print(`${JSON.stringify((await keel.runs.get(tenant, runId())).run, null, 2)}\n`);
      return 0;
    case 'trace': {
      let after = 0;
      for (;;) {
        const page = await keel.runs.trace(tenant, runId(), { after: String(after) });
        const events = page.events as { seq: number; ts: string; type: string; data: unknown }[];
        for (const event of events)
          print(`${event.seq}\t${event.ts}\t${event.type}\t${JSON.stringify(event.data)}\n`);
        if (events.length < 1000) return 0;
        after = events[events.length - 1]?.seq ?? after;
      }
    }
    case 'cancel': {
      const result = await keel.runs.cancel(
        tenant,
        runId(),
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
      const result = await keel.runs.fork(tenant, runId(), {
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
