// `keel chat <agent> [scope]`: an interactive terminal channel on one scope. Each line
// is a turn; the answer streams in from the run's events as it is written, with the
// tool calls and their results in between. `/quit` or end of input leaves.

import { createInterface } from 'node:readline/promises';
import { ApiError, createClient } from './client.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { parseCommand } from './args.ts';
import { UsageError } from './errors.ts';
import { EventPrinter } from './event-printer.ts';

export const CHAT_USAGE = `keel chat <agent> [scope] ${CLIENT_USAGE}`;

export async function chatCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, CLIENT_OPTIONS);
  const [agent, scope = 'terminal'] = positionals;
  if (!agent) throw new UsageError(`usage: ${CHAT_USAGE}`);
  const client = createClient(loadClientConfig(values));
  const write = (text: string): void => void process.stdout.write(text);
  write(
    `chat with ${agent} on scope ${JSON.stringify(scope)} at ${client.config.url} — /quit to leave\n`,
  );

  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  const closed = new Promise<null>((resolve) => terminal.once('close', () => resolve(null)));
  try {
    for (;;) {
      const line = await Promise.race([terminal.question('you> '), closed]);
      if (line === null) return 0; // end of input
      const text = line.trim();
      if (text === '/quit' || text === '/exit') return 0;
      if (text === '') continue;
      try {
        const created = await client.request('POST', client.tenantPath('/turns'), {
          agent,
          scope,
          payload: { text },
        });
        const printer = new EventPrinter(write, { answerPrefix: `${agent}> ` });
        for await (const event of client.events(created.run_id as string)) printer.take(event);
      } catch (error) {
        // One failed turn does not end the conversation.
        if (!(error instanceof ApiError)) throw error;
        write(`keel: ${error.code}: ${error.message}\n`);
      }
    }
  } finally {
    terminal.close();
  }
}
