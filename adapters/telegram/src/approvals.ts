// Approvals in Telegram (docs/approvals.md, docs/channels.md): keel delivers a call that
// waits for a person as an `approval` delivery; the bot shows the tool and its arguments
// with two inline buttons. A press posts the decision to keel
// (`POST T/runs/:run_id/approvals/:call_id`) and answers the button; a press on a call
// decided already (the other button, a second person, the timeout) is told so.
//
// callback_data holds at most 64 bytes, and a model's call ids can be long: a button
// carries the run id and a short hash of the call id, and the press finds the call among
// the run's approvals.

import { createHash } from 'node:crypto';
import type { Bot } from 'grammy';
import type { InlineKeyboardMarkup } from 'grammy/types';
import { KeelCallError } from './keel-client.ts';
import type { KeelClient } from './keel-client.ts';

export const APPROVED_REPLY = 'Approved.';
export const DENIED_REPLY = 'Denied.';
export const ALREADY_DECIDED_REPLY = 'This was already decided.';
export const UNKNOWN_APPROVAL_REPLY = 'This request no longer exists.';

const MAX_ARGUMENTS_CHARS = 3000;

function callHash(callId: string): string {
  return createHash('sha256').update(callId, 'utf8').digest('hex').slice(0, 16);
}

/** The message an approval delivery becomes (one part: arguments are cut to fit). */
export function approvalText(payload: Record<string, unknown>): string {
  const tool = typeof payload.tool === 'string' ? payload.tool : 'a tool';
  let args = typeof payload.arguments === 'string' ? payload.arguments : '';
  if (args.length > MAX_ARGUMENTS_CHARS) args = `${args.slice(0, MAX_ARGUMENTS_CHARS)}…`;
  const expires =
    typeof payload.expires_at === 'string'
      ? `\nIf nobody decides by ${payload.expires_at}, it is denied.`
      : '';
  return `Approval needed: the agent wants to call ${tool}\n\n${args}${expires}`;
}

export function approvalKeyboard(runId: string, callId: string): InlineKeyboardMarkup {
  const key = `${runId}:${callHash(callId)}`;
  return {
    inline_keyboard: [
      [
        { text: 'Approve', callback_data: `a:${key}` },
        { text: 'Deny', callback_data: `d:${key}` },
      ],
    ],
  };
}

export function parseApprovalButton(
  data: string,
): { decision: 'approve' | 'deny'; runId: string; hash: string } | null {
  const match = /^([ad]):([^:]{1,64}):([0-9a-f]{16})$/.exec(data);
  if (!match) return null;
  return {
    decision: match[1] === 'a' ? 'approve' : 'deny',
    runId: match[2] ?? '',
    hash: match[3] ?? '',
  };
}

/** What a press answers: the decision posted, or why it was not. Throws when keel is away. */
export async function decideFromButton(
  keel: KeelClient,
  data: string,
  who: string,
): Promise<string> {
  const button = parseApprovalButton(data);
  if (!button) return UNKNOWN_APPROVAL_REPLY;
  try {
    const approvals = await keel.listRunApprovals(button.runId);
    const approval = approvals.find((candidate) => callHash(candidate.call_id) === button.hash);
    if (!approval) return UNKNOWN_APPROVAL_REPLY;
    await keel.decideApproval(
      button.runId,
      approval.call_id,
      button.decision,
      `by ${who} in Telegram`,
    );
    return button.decision === 'approve' ? APPROVED_REPLY : DENIED_REPLY;
  } catch (error) {
    if (error instanceof KeelCallError && error.status === 409) return ALREADY_DECIDED_REPLY;
    if (error instanceof KeelCallError && error.status === 404) return UNKNOWN_APPROVAL_REPLY;
    throw error;
  }
}

export function installApprovalButtons(bot: Bot, keel: KeelClient): void {
  bot.on('callback_query:data', async (ctx) => {
    const from = ctx.callbackQuery.from;
    const who = from.username ? `@${from.username}` : `${from.first_name} (${from.id})`;
    const answer = await decideFromButton(keel, ctx.callbackQuery.data, who);
    await ctx.answerCallbackQuery({ text: answer });
    // The call is settled (or gone) either way: the buttons go, the question stays.
    await ctx
      .editMessageReplyMarkup({ reply_markup: { inline_keyboard: [] } })
      .catch(() => undefined);
  });
}
