// The fixture model's rules (fixture-script.ts) read from an OpenAI Chat Completions
// request instead of keel entries, and its decision written back as a Chat Completions
// response (JSON or SSE chunks). Pure functions; fixture-server.ts does the HTTP.

import type { ToolResultBody } from '../types.ts';
import type { FixtureConversation, ScriptedCall } from './fixture-script.ts';

export interface WireToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface WireMessage {
  role?: string;
  content?: unknown;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  }
  return '';
}

/**
 * A tool message's content is the result's JSON; keel sends a failed result as
 * `{"error": {"code", "message"}}` (providers/prompt.ts), so that shape reads as failed.
 */
function resultOf(name: string, content: string): FixtureConversation['results'][number] {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return { name, ok: true, result: content };
  }
  const error = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error === 'object' && typeof error.code === 'string') {
    return {
      name,
      ok: false,
      error: { code: error.code, message: typeof error.message === 'string' ? error.message : '' },
    };
  }
  return { name, ok: true, result: value as ToolResultBody['result'] };
}

/** The latest user message's text and what followed it, as the fixture rules need. */
export function wireConversation(messages: readonly WireMessage[]): FixtureConversation {
  const start = messages.findLastIndex((item) => item.role === 'user');
  const conversation: FixtureConversation = {
    runId: null,
    userText: start >= 0 ? contentText(messages[start]?.content) : '',
    steps: 0,
    results: [],
  };
  const names = new Map<string, string>();
  for (const message of messages.slice(start + 1)) {
    if (message.role === 'assistant') {
      conversation.steps += 1;
      for (const call of message.tool_calls ?? []) {
        if (call.id) names.set(call.id, call.function?.name ?? 'unknown');
      }
    }
    if (message.role === 'tool') {
      const name = names.get(message.tool_call_id ?? '') ?? 'unknown';
      conversation.results.push(resultOf(name, contentText(message.content)));
    }
  }
  return conversation;
}

export interface WireAnswer {
  id: string;
  model: string;
  created: number;
  text: string;
  calls: (ScriptedCall & { id: string })[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function finishReason(answer: WireAnswer): string {
  return answer.calls.length > 0 ? 'tool_calls' : 'stop';
}

function wireToolCalls(answer: WireAnswer): object[] {
  return answer.calls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
}

export function completionJson(answer: WireAnswer): object {
  return {
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.calls.length > 0 && answer.text === '' ? null : answer.text,
          ...(answer.calls.length > 0 && { tool_calls: wireToolCalls(answer) }),
        },
        finish_reason: finishReason(answer),
      },
    ],
    usage: answer.usage,
  };
}

/** Splits argument text into up to three pieces, as real servers stream them. */
function argumentPieces(text: string): string[] {
  if (text.length < 3) return [text];
  const third = Math.ceil(text.length / 3);
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)];
}

/** The SSE chunk objects of a streamed answer (without the final `[DONE]`). */
export function completionChunks(
  answer: WireAnswer,
  textChunks: readonly string[],
  includeUsage: boolean,
): object[] {
  const chunk = (choices: object[], extra: object = {}): object => ({
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    choices,
    ...extra,
  });
  const delta = (value: object, finish: string | null = null): object =>
    chunk([{ index: 0, delta: value, finish_reason: finish }]);
  const chunks: object[] = [delta({ role: 'assistant', content: '' })];
  for (const text of textChunks) if (text !== '') chunks.push(delta({ content: text }));
  answer.calls.forEach((call, index) => {
    chunks.push(
      delta({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of argumentPieces(call.arguments)) {
      chunks.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(delta({}, finishReason(answer)));
  if (includeUsage) chunks.push(chunk([], { usage: answer.usage }));
  return chunks;
}
