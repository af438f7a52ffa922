// keel's conversation → the AI SDK's LanguageModelV3Prompt (the one conversion every
// wire format shares): system prompt, the thread's past turns as plain user/assistant
// text, then this run's entries. Tool results are `tool` messages (consecutive ones
// merged, which is what Anthropic needs); a failed result is sent as `error-json`
// `{error: {code, message}}` so the model can read it on every provider.

import type {
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import type { JSONValue } from '@ai-sdk/provider';
import type { AssistantBody, JsonObject, ToolResultBody } from '../types.ts';
import type { ModelRequest, ToolDefinition } from './provider.ts';

/** Notes are runtime instructions the model must see; they travel as user text. */
const NOTE_PREFIX = '[keel] ';

/**
 * Tool-call arguments go back to the wire as an object. Text that is not a JSON object
 * (the model produced invalid arguments) becomes `{}`: Anthropic requires an object,
 * and the recorded tool_result already told the model what was wrong.
 */
function argumentsObject(raw: string): JsonObject {
  try {
    const value = JSON.parse(raw) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as JsonObject)
      : {};
  } catch {
    return {};
  }
}

function assistantMessage(body: AssistantBody): LanguageModelV3Message {
  const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
  if (body.text !== '') content.push({ type: 'text', text: body.text });
  for (const call of body.tool_calls) {
    content.push({
      type: 'tool-call',
      toolCallId: call.call_id,
      toolName: call.name,
      input: argumentsObject(call.arguments),
    });
  }
  // An assistant turn must not be empty on any provider.
  if (content.length === 0) content.push({ type: 'text', text: ' ' });
  return { role: 'assistant', content };
}

function toolResultPart(body: ToolResultBody): LanguageModelV3ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: body.call_id,
    toolName: body.name,
    output: body.ok
      ? { type: 'json', value: (body.result ?? null) as JSONValue }
      : {
          type: 'error-json',
          value: {
            error: { code: body.error?.code ?? 'ERROR', message: body.error?.message ?? '' },
          },
        },
  };
}

export function toPrompt(request: ModelRequest): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [{ role: 'system', content: request.system }];
  for (const message of request.context) {
    prompt.push(
      message.role === 'user'
        ? { role: 'user', content: [{ type: 'text', text: message.content }] }
        : { role: 'assistant', content: [{ type: 'text', text: message.content }] },
    );
  }
  for (const entry of request.entries) {
    const last = prompt[prompt.length - 1];
    switch (entry.kind) {
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: entry.body.text }] });
        break;
      case 'note':
        prompt.push({
          role: 'user',
          content: [{ type: 'text', text: `${NOTE_PREFIX}${entry.body.text}` }],
        });
        break;
      case 'assistant':
        prompt.push(assistantMessage(entry.body));
        break;
      case 'tool_result':
        if (last?.role === 'tool') last.content.push(toolResultPart(entry.body));
        else prompt.push({ role: 'tool', content: [toolResultPart(entry.body)] });
        break;
    }
  }
  return prompt;
}

export function toTools(tools: readonly ToolDefinition[]): LanguageModelV3FunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema as LanguageModelV3FunctionTool['inputSchema'],
  }));
}
