// `fixture/<anything>`: the deterministic scripted model (docs/agent-loop.md), in
// process. It decides from the conversation alone (see fixture-script.ts).
//
// `@fail n status` and restarts: "the first n requests of this run" are counted as
// follows. Once the run has a recorded model response, all n failures lie in the past,
// so the fixture never fails again — after a restart too, because that is read from
// the run's entries. Failed requests themselves leave no entry, so while the run has
// no response yet they are counted in this provider instance's memory, keyed by run
// id. A process that dies in the middle of a failure sequence therefore starts it
// again after the restart (at most n more failures); it never fails a request it
// should have answered after a response was recorded.

import { setTimeout as delay } from 'node:timers/promises';
import type { AssistantBody, ToolCall } from '../types.ts';
import type { ModelRequest, ModelResponse, Provider } from './provider.ts';
import { MEMORY_FLUSH_MARKER, ProviderError, SUMMARY_REQUEST_MARKER } from './provider.ts';
import {
  decideFixtureStep,
  fixtureConversation,
  fixtureFlushFact,
  fixtureOverflow,
  fixtureAnswerText,
  fixtureTokens,
  parseFixtureScript,
  ScriptedFailures,
  splitIntoChunks,
} from './fixture-script.ts';

function abortError(): DOMException {
  return new DOMException('the model call was aborted', 'AbortError');
}

const tokens = fixtureTokens;

function inputText(request: ModelRequest): string {
  const parts = [request.system, ...request.context.map((message) => message.content)];
  for (const entry of request.entries) parts.push(JSON.stringify(entry.body));
  return parts.join('\n');
}

export function createFixtureProvider(): Provider {
  const failures = new ScriptedFailures();

  return {
    name: 'fixture',
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const conversation = fixtureConversation(request.entries);
      // A compaction's summarising request is answered by the summary rule, no directives.
      // A memory flush request likewise (memory-flush.ts): one memory_put call.
      const flushing = request.system.startsWith(MEMORY_FLUSH_MARKER);
      const summarising = request.system.startsWith(SUMMARY_REQUEST_MARKER);
      const script = parseFixtureScript(summarising || flushing ? '' : conversation.userText);
      if (request.signal.aborted) throw abortError();
      const overflow = fixtureOverflow(script, tokens(inputText(request)));
      if (overflow !== null) {
        throw new ProviderError(`fixture: ${overflow}`, { status: 400, contextExceeded: true });
      }
      if (script.sleepMs > 0) {
        try {
          await delay(script.sleepMs, undefined, { signal: request.signal });
        } catch {
          throw abortError();
        }
      }

      if (script.fail && conversation.steps === 0) {
        const nth = failures.next(conversation.runId ?? '', script.fail.count);
        if (nth !== null) {
          throw new ProviderError(
            `fixture: scripted failure ${nth} of ${script.fail.count} (status ${script.fail.status})`,
            { status: script.fail.status },
          );
        }
      }

      const step = conversation.steps + 1;
      const decision = decideFixtureStep(script, conversation);
      const toolCalls: ToolCall[] = flushing
        ? [
            {
              call_id: 'flush_1',
              name: 'memory_put',
              arguments: JSON.stringify({ text: fixtureFlushFact(conversation.userText) }),
            },
          ]
        : decision.kind === 'calls'
          ? decision.calls.map((call, index) => ({
              call_id: `call_${step}_${index + 1}`,
              name: call.name,
              arguments: call.arguments,
            }))
          : [];
      const text = fixtureAnswerText({ flushing, summarising }, decision, conversation.userText);

      if (decision.kind === 'answer' && script.streamChunks > 0 && request.onDelta) {
        for (const chunk of splitIntoChunks(text, script.streamChunks)) {
          // Yield between chunks, as a real stream would, so an abort can land in between.
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (request.signal.aborted) throw abortError();
          request.onDelta(chunk);
        }
      }

      const assistant: AssistantBody = {
        text,
        tool_calls: toolCalls,
        usage: {
          input_tokens: tokens(inputText(request)),
          output_tokens: tokens(text) + toolCalls.length * 8,
        },
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
        model: `fixture/${request.model}`,
      };
      return {
        assistant,
        raw: {
          request: JSON.stringify({
            model: request.model,
            context: request.context.length,
            entries: request.entries.length,
          }),
          response: JSON.stringify({ text, tool_calls: toolCalls }),
        },
      };
    },
  };
}
