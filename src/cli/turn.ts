// `keel turn <agent> <scope> <text>`: submit a turn; `--wait` prints the output when the
// run ends, `--stream` shows its events as they happen. Both say so when the run waits
// for a person's approval, with the commands that decide it (docs/approvals.md).

import { KeelApiError } from '../client/index.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { parseCommand } from './args.ts';
import { UsageError } from './errors.ts';
import { decidedNotice, waitingNotice, withApprovalArguments } from './approval-notice.ts';
import { EventPrinter, replyText } from './event-printer.ts';
import type { Connection } from './keel.ts';
import { connect } from './keel.ts';

export const TURN_USAGE = `keel turn <agent> <scope> <text> [--wait] [--stream] [--request-id ID] [--deliver-to DEST] [--on-busy enqueue|reject|steer|interrupt] ${CLIENT_USAGE}`;

const ON_BUSY = ['enqueue', 'reject', 'steer', 'interrupt'];

type Print = (text: string) => void;
const stdout: Print = (text) => process.stdout.write(text);

/** Long-polls until the run is terminal (the wait route caps one poll at 120 s). */
export async function waitForTerminal(
  { keel, tenant }: Connection,
  runId: string,
): Promise<Record<string, unknown>> {
  for (;;) {
    const result = await keel.turns.wait(tenant, runId, 60_000);
    if (!result.timed_out) return result.run;
  }
}

/**
 * `--wait`: follows the run's events without printing them, except a call waiting for
 * approval and its decision — a long poll alone would look hung for as long as nobody
 * decides. Then reads the finished run (a stream that ends early falls back to the poll).
 */
async function waitTelling(
  connection: Connection,
  runId: string,
  print: Print,
): Promise<Record<string, unknown>> {
  const { keel, tenant } = connection;
  try {
    for await (const event of keel.turns.events(tenant, runId)) {
      if (event.type === 'approval.requested') {
        const described = await withApprovalArguments(connection, runId, event);
        if (described.type === 'approval.requested')
          print(`${waitingNotice(runId, described.data, { given: connection.config.given })}\n`);
      } else if (event.type === 'approval.decided') {
        print(`  ${decidedNotice(event.data)}\n`);
      }
    }
  } catch (error) {
    // The stream only tells; the long poll below decides. A stream given up on (closed
    // again and again through hours of waiting) is no reason to fail the wait.
    if (error instanceof KeelApiError) throw error;
  }
  return waitForTerminal(connection, runId);
}

/** Prints the run's outcome; the exit code is 0 only for a succeeded run. */
function printOutcome(run: Record<string, unknown>, print: Print): number {
  if (run.status === 'succeeded') {
    print(`${replyText(run.output)}\n`);
    return 0;
  }
  const error = run.error as { code?: string; message?: string } | null;
  print(`keel: run ${run.status}: ${error?.code ?? ''}: ${error?.message ?? ''}\n`);
  return 1;
}

export async function turnCommand(argv: string[], print: Print = stdout): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...CLIENT_OPTIONS,
    wait: { type: 'boolean' },
    stream: { type: 'boolean' },
    'request-id': { type: 'string' },
    'deliver-to': { type: 'string' },
    'on-busy': { type: 'string' },
  });
  const onBusy = values['on-busy'];
  if (onBusy !== undefined && !ON_BUSY.includes(onBusy)) {
    throw new UsageError(`--on-busy must be one of ${ON_BUSY.join(', ')}, not "${onBusy}"`);
  }
  const [agent, scope, ...words] = positionals;
  if (!agent || !scope || words.length === 0) throw new UsageError(`usage: ${TURN_USAGE}`);
  const connection = connect(loadClientConfig(values));
  const { keel, tenant } = connection;
  const created = await keel.turns.submit(tenant, {
    agent,
    scope,
    payload: { text: words.join(' ') },
    ...(values['request-id'] && { request_id: values['request-id'] }),
    ...(values['deliver-to'] && { delivery: { destination: values['deliver-to'] } }),
    ...(onBusy !== undefined && { on_busy: onBusy as 'enqueue' }),
    // Watched from the start, so a provider with stream = "when-watched" streams.
    ...(values.stream && { follow: true }),
  });
  const runId = created.run_id;
  if (values.stream) {
    print(`run ${runId}${created.deduplicated ? ' (deduplicated)' : ''}\n`);
    const printer = new EventPrinter(print, { runId, given: connection.config.given });
    for await (const event of keel.turns.events(tenant, runId))
      printer.take(await withApprovalArguments(connection, runId, event));
    return printer.outcome.status === 'succeeded' ? 0 : 1;
  }
  if (values.wait) return printOutcome(await waitTelling(connection, runId, print), print);
  const steered = created.steered ? ` (steered into it as ${created.steer_id})` : '';
  print(`${runId} ${created.status}${created.deduplicated ? ' (deduplicated)' : ''}${steered}\n`);
  return 0;
}
