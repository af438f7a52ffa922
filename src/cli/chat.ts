// `keel chat <agent> [scope]`: an interactive terminal channel on one scope. Each line
// is a turn; the answer streams in from the run's events as it is written, with the
// tool calls and their results in between. Ctrl-C while an answer streams cancels that
// run (and says so); a second Ctrl-C — or two at the prompt — leaves, as do `/quit` and
// end of input. `/new` starts a new conversation (a new scope), `/cancel` cancels the
// streaming run, `/help` lists these. A call that waits for a person's approval is shown
// with the commands that decide it; `/approve` and `/deny [why]` decide it from here.

import { randomBytes } from 'node:crypto';
import { KeelApiError } from '../client/index.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { parseCommand } from './args.ts';
import { ChatInput } from './chat-input.ts';
import { UsageError } from './errors.ts';
import { withApprovalArguments } from './approval-notice.ts';
import { EventPrinter } from './event-printer.ts';
import type { Connection } from './keel.ts';
import { connect } from './keel.ts';

export const CHAT_USAGE = `keel chat <agent> [scope] ${CLIENT_USAGE}`;

const CHAT_HELP = `commands:
  /help     this list
  /new      start a new conversation (a new scope; the old one keeps its thread)
  /cancel   cancel the answer that is streaming (Ctrl-C does the same)
  /approve  approve the tool call the answer waits for
  /deny     deny it; the rest of the line is the reason the model is told
  /quit     leave (also /exit, Ctrl-D, or Ctrl-C twice)
anything else is sent as a turn; with a fixture/… model, directives such as
@call clock_now {}  or  @sleep 20000  work (keel fixture-model --help lists them)`;

/** Exit code after Ctrl-C, as shells report a SIGINT death (128 + 2). */
const INTERRUPTED = 130;

/** The run being streamed, and what Ctrl-C has done to it so far. */
interface Streaming {
  runId: string | null;
  cancelling: boolean;
  stop: AbortController;
  /** The call the run waits for a person's decision on, from its `approval.requested`. */
  waitingCall: string | null;
}

const DECIDE = /^\/(approve|deny)(?:\s+(.*))?$/s;

class ChatSession {
  private streaming: Streaming | null = null;
  /** Ctrl-Cs since the last line was entered: the second one leaves. */
  private interrupts = 0;
  private leave: ((code: number) => void) | null = null;
  readonly left = new Promise<number>((resolve) => (this.leave = resolve));
  readonly input: ChatInput;

  constructor(
    private readonly client: Connection,
    private readonly agent: string,
    public scope: string,
    private readonly write: (text: string) => void,
  ) {
    this.input = new ChatInput('you> ', {
      onLine: (line) => this.lineWhileStreaming(line),
      onInterrupt: () => this.interrupt(),
    });
  }

  /** While an answer streams, `/cancel` and `/quit` act at once; other lines wait. */
  private lineWhileStreaming(line: string): boolean {
    this.interrupts = 0;
    if (!this.streaming) return false;
    const text = line.trim();
    if (text === '/cancel') {
      this.cancel('/cancel in keel chat');
      return true;
    }
    if (text === '/quit' || text === '/exit') {
      this.streaming.stop.abort();
      this.leave?.(0);
      return true;
    }
    const decide = DECIDE.exec(text);
    if (decide) {
      void this.decide(decide[1] as 'approve' | 'deny', decide[2]?.trim() || undefined);
      return true;
    }
    return false;
  }

  private async decide(decision: 'approve' | 'deny', note: string | undefined): Promise<void> {
    const streaming = this.streaming;
    const callId = streaming?.waitingCall;
    if (!streaming?.runId || !callId) {
      this.write('nothing waits for approval\n');
      return;
    }
    try {
      await this.client.keel.approvals.decide(this.client.tenant, streaming.runId, callId, {
        decision,
        ...(note !== undefined && { note }),
      });
      // The stream's approval.decided says how it came out, and the answer goes on.
    } catch (error) {
      if (!(error instanceof KeelApiError)) throw error;
      this.write(`keel: ${error.code}: ${error.message}\n`);
    }
  }

  private interrupt(): void {
    this.interrupts += 1;
    if (this.interrupts >= 2 || this.streaming?.cancelling) {
      this.write('\n(leaving)\n');
      this.streaming?.stop.abort();
      this.leave?.(INTERRUPTED);
      return;
    }
    if (this.streaming) {
      this.cancel('Ctrl-C in keel chat');
      return;
    }
    this.input.clearLine();
    this.write('\n(Ctrl-C again, /quit or Ctrl-D to leave; /help for commands)\n');
    this.input.prompt();
  }

  private cancel(reason: string): void {
    const streaming = this.streaming;
    if (!streaming || streaming.cancelling) return;
    streaming.cancelling = true;
    this.write(`\n^C cancelling run ${streaming.runId ?? '(being created)'}…\n`);
    if (streaming.runId) void this.sendCancel(streaming.runId, reason);
  }

  private async sendCancel(runId: string, reason: string): Promise<void> {
    try {
      await this.client.keel.runs.cancel(this.client.tenant, runId, { reason });
    } catch (error) {
      // The run may have ended first; the stream's last event says how it ended.
      this.write(`keel: cancel: ${error instanceof KeelApiError ? error.code : String(error)}\n`);
    }
  }

  async turn(text: string): Promise<void> {
    const streaming: Streaming = {
      runId: null,
      cancelling: false,
      stop: new AbortController(),
      waitingCall: null,
    };
    this.streaming = streaming;
    try {
      const created = await this.client.keel.turns.submit(this.client.tenant, {
        agent: this.agent,
        scope: this.scope,
        payload: { text },
        follow: true,
      });
      streaming.runId = created.run_id;
      // Ctrl-C came while the turn was being submitted.
      if (streaming.cancelling) await this.sendCancel(streaming.runId, 'Ctrl-C in keel chat');
      const runId = streaming.runId;
      const printer = new EventPrinter(this.write, {
        answerPrefix: `${this.agent}> `,
        runId,
        given: this.client.config.given,
        approvalHint: 'or here: /approve, or /deny and the reason',
      });
      for await (const event of this.client.keel.turns.events(this.client.tenant, runId, {
        signal: streaming.stop.signal,
      })) {
        if (event.type === 'approval.requested') streaming.waitingCall = String(event.data.call_id);
        if (event.type === 'approval.decided') streaming.waitingCall = null;
        printer.take(await withApprovalArguments(this.client, runId, event));
      }
      if (printer.outcome.status === 'cancelled')
        this.write(`(run ${streaming.runId} cancelled)\n`);
    } catch (error) {
      if (streaming.stop.signal.aborted) return; // leaving
      // One failed turn does not end the conversation.
      if (!(error instanceof KeelApiError)) throw error;
      this.write(`keel: ${error.code}: ${error.message}\n`);
    } finally {
      // Ctrl-Cs are not forgotten here: one more at the prompt after a cancel leaves.
      this.streaming = null;
    }
  }
}

export async function chatCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, CLIENT_OPTIONS);
  const [agent, scope = 'terminal'] = positionals;
  if (!agent) throw new UsageError(`usage: ${CHAT_USAGE}`);
  const client = connect(loadClientConfig(values));
  const write = (text: string): void => void process.stdout.write(text);
  write(
    `chat with ${agent} on scope ${JSON.stringify(scope)} at ${client.config.url} — /help for commands, /quit to leave\n`,
  );
  const session = new ChatSession(client, agent, scope, write);
  try {
    return await Promise.race([session.left, converse(session, write)]);
  } finally {
    session.input.close();
  }
}

async function converse(session: ChatSession, write: (text: string) => void): Promise<number> {
  for (;;) {
    const line = await session.input.next();
    if (line === null) return 0; // end of input
    const text = line.trim();
    if (text === '') continue;
    if (text === '/quit' || text === '/exit') return 0;
    if (text === '/help') {
      write(`${CHAT_HELP}\n`);
    } else if (text === '/new') {
      session.scope = `${session.scope.replace(/~[0-9a-f]{6}$/, '')}~${randomBytes(3).toString('hex')}`;
      write(`new conversation on scope ${JSON.stringify(session.scope)}\n`);
    } else if (text === '/cancel') {
      write('nothing is running\n');
    } else if (DECIDE.test(text)) {
      write('nothing waits for approval\n');
    } else if (text.startsWith('/')) {
      write(`unknown command ${text.split(/\s/)[0]}: /help lists them\n`);
    } else {
      await session.turn(text);
    }
  }
}
