// `keel approvals [list | approve <run> <call> | deny <run> <call>] [--note N]`: the
// tool calls waiting for a person (docs/approvals.md), over the HTTP API. The list shows
// each call's arguments and what its run was asked (the input), one line each.

import { oneLine } from './approval-notice.ts';
import { parseCommand } from './args.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';
import { connect } from './keel.ts';
import { printList } from './table.ts';

export const APPROVALS_USAGE = `keel approvals [list [--limit N] [--json] | approve <run_id> <call_id> [--note N] | deny <run_id> <call_id> [--note N]] ${CLIENT_USAGE}`;

type Print = (text: string) => void;

export async function approvalsCommand(
  argv: string[],
  print: Print = (text) => process.stdout.write(text),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...CLIENT_OPTIONS,
    limit: { type: 'string' },
    note: { type: 'string' },
    json: { type: 'boolean' },
  });
  const [action = 'list', runId, callId] = positionals;
  const { keel, tenant } = connect(loadClientConfig(values));
  switch (action) {
    case 'list': {
      const listed = await keel.approvals.list(tenant, values.limit ? { limit: values.limit } : {});
      printList(
        print,
        { items: listed.approvals as unknown as Record<string, unknown>[], raw: listed },
        {
          json: values.json === true,
          empty: 'no approvals waiting',
          columns: [
            { title: 'RUN', value: (a) => a.run_id },
            { title: 'CALL', value: (a) => a.call_id },
            { title: 'TOOL', value: (a) => a.tool },
            { title: 'ARGUMENTS', value: (a) => oneLine(String(a.arguments), 60) },
            { title: 'AGENT', value: (a) => a.agent },
            { title: 'SCOPE', value: (a) => a.scope },
            { title: 'REQUESTED', value: (a) => a.requested_at },
            { title: 'EXPIRES', value: (a) => a.expires_at },
            // What the run was asked, on one line (--json has it whole, up to 2,000 chars).
            { title: 'INPUT', value: (a) => oneLine(String(a.input_text), 60) },
          ],
        },
      );
      return 0;
    }
    case 'approve':
    case 'deny': {
      if (!runId || !callId) throw new UsageError(`approvals ${action} needs <run_id> <call_id>`);
      const decided = await keel.approvals.decide(tenant, runId, callId, {
        decision: action,
        ...(values.note !== undefined && { note: values.note }),
      });
      print(`${decided.approval.run_id} ${decided.approval.call_id} ${decided.approval.status}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown approvals action "${action}"`);
  }
}
