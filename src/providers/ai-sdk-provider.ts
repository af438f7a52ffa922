// One keel Provider over any AI SDK v6 LanguageModelV3 (docs/agent-loop.md, Providers):
// exactly one HTTP call per `complete` (`doStream`, or `doGenerate` when streaming is off
// or, with `stream = "when-watched"`, nobody watches), no library retries or tool loop —
// keel's model-call.ts retries. Text deltas go to `onDelta` as they arrive; streamed
// tool-call pieces are assembled per call id and the final raw argument text is kept
// verbatim. This is the only file that touches the versioned provider spec
// (`doStream`/`doGenerate`).

import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { AssistantBody, ToolCall } from '../types.ts';
import { toPrompt, toTools } from './prompt.ts';
import type { ModelRequest, ModelResponse, Provider, RawExchange } from './provider.ts';
import { ProviderError } from './provider.ts';
import { isAbortError, toProviderError } from './provider-errors.ts';
import type { RecordedExchange } from './recording-fetch.ts';
import { createRecordingFetch, REDACTED } from './recording-fetch.ts';
import type { ModelTransport } from './node-http-transport.ts';

/**
 * Builds the library model for a model id, once per provider and id: its `fetch` hands
 * every request to the recording fetch of the call in progress (building a model per call
 * rebuilt the library's response schemas and re-ran a dynamic import each time).
 */
export type LanguageModelFactory = (
  modelId: string,
  fetch: typeof globalThis.fetch,
) => Promise<LanguageModel>;
type LanguageModel = Pick<LanguageModelV3, 'doStream' | 'doGenerate'>;

/**
 * How a provider asks for answers: streamed (`true`), whole (`false`), or streamed only
 * when someone watches the run live as the call goes out (`request.watched`) and whole
 * otherwise — the text deltas are what a stream buys, and on Node 20 the library's
 * web-stream pipeline costs over a third of a model call's CPU (`npm run bench --
 * model-http`).
 */
export type StreamMode = boolean | 'when-watched';

export interface AiSdkProviderOptions {
  name: string;
  model: LanguageModelFactory;
  /** Strings that must never reach the trace (the API key). */
  secrets: readonly string[];
  /** Default true; false uses the non-streaming endpoint; see StreamMode. */
  stream?: StreamMode;
  /** How requests leave (node-http-transport.ts); shared by the providers of a keel. */
  transport: ModelTransport;
  /**
   * One request from send to its last byte (a stalled stream included); past it the
   * request is aborted (its connection closed) and the call fails as a timeout.
   */
  timeoutMs: number;
}

const FINISH_REASONS: Record<LanguageModelV3FinishReason['unified'], string> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content_filter',
  'tool-calls': 'tool_calls',
  error: 'error',
  other: 'other',
};

function abortError(): DOMException {
  return new DOMException('the model call was aborted', 'AbortError');
}

function usageOf(usage: LanguageModelV3Usage | undefined): AssistantBody['usage'] {
  return {
    input_tokens: usage?.inputTokens.total ?? 0,
    output_tokens: usage?.outputTokens.total ?? 0,
  };
}

/** Assembles one response from stream parts. */
class StreamAssembly {
  text = '';
  private readonly calls = new Map<string, { name: string; pieces: string[]; final?: string }>();
  usage: AssistantBody['usage'] = { input_tokens: 0, output_tokens: 0 };
  finishReason = 'other';

  constructor(private readonly onDelta: ((text: string) => void) | undefined) {}

  take(part: LanguageModelV3StreamPart): void {
    switch (part.type) {
      case 'text-delta':
        this.text += part.delta;
        if (part.delta !== '') this.onDelta?.(part.delta);
        break;
      case 'tool-input-start':
        if (!this.calls.has(part.id)) this.calls.set(part.id, { name: part.toolName, pieces: [] });
        break;
      case 'tool-input-delta':
        this.calls.get(part.id)?.pieces.push(part.delta);
        break;
      case 'tool-call': {
        const call = this.calls.get(part.toolCallId);
        if (call) call.final = part.input;
        else
          this.calls.set(part.toolCallId, { name: part.toolName, pieces: [], final: part.input });
        break;
      }
      case 'finish':
        this.usage = usageOf(part.usage);
        this.finishReason = FINISH_REASONS[part.finishReason.unified];
        break;
      case 'error':
        // An in-band error event (e.g. Anthropic `overloaded_error`): transient.
        throw toProviderError(part.error);
      default:
        break;
    }
  }

  toolCalls(): ToolCall[] {
    return [...this.calls].map(([id, call]) => ({
      call_id: id,
      name: call.name,
      arguments: call.final ?? call.pieces.join(''),
    }));
  }
}

/**
 * A recorded body as a JSON text. A request body is the provider package's
 * `JSON.stringify` output and is kept as is, unparsed; only one the recorder changed
 * (cut at its size limit: no closing brace; a key redacted inside it) is checked. A
 * response body is always checked (a server may answer anything). Whatever is not JSON
 * is kept as a string value.
 */
function requestJson(text: string): string {
  if (!text.startsWith('{') || !text.endsWith('}')) return JSON.stringify(text);
  return text.includes(REDACTED) ? checkedJson(text) : text;
}

function checkedJson(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

function rawOf(exchange: RecordedExchange, streamed: boolean): RawExchange {
  return {
    ...(exchange.request !== null && { request: requestJson(exchange.request) }),
    // A streamed body is the SSE text as received (a string); a JSON body stays JSON.
    response: streamed ? JSON.stringify(exchange.response) : checkedJson(exchange.response),
  };
}

/**
 * The header that names a model call to the shared fetch of its library model; taken
 * off again before the request leaves. (An AsyncLocalStorage did this routing before: it
 * enables promise hooks for the whole process, which cost every promise of every run.)
 */
const CALL_HEADER = 'x-keel-model-call';

/** The call id of a request and its headers without it (null: no id on the request). */
function takeCallId(init: RequestInit | undefined): { id: string; init: RequestInit } | null {
  const headers = init?.headers;
  if (headers instanceof Headers) {
    const id = headers.get(CALL_HEADER);
    if (id === null) return null;
    const rest = new Headers(headers);
    rest.delete(CALL_HEADER);
    return { id, init: { ...init, headers: rest } };
  }
  if (headers && !Array.isArray(headers)) {
    // The AI SDK hands its headers over as a plain object with lower-case names.
    const { [CALL_HEADER]: id, ...rest } = headers;
    if (typeof id !== 'string') return null;
    return { id, init: { ...init, headers: rest } };
  }
  return null;
}

/**
 * The signal of one request: the caller's (cancel, deadline, shutdown) or timeoutMs,
 * whichever comes first. A plain timer and listener, both removed by `clear` once the
 * call is over, rather than AbortSignal.any/timeout: nothing stays behind per call.
 */
function requestDeadline(outer: AbortSignal, timeoutMs: number) {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('the model request timed out', 'TimeoutError'));
  }, timeoutMs);
  return {
    signal: controller.signal,
    timedOut: () => timedOut && !outer.aborted,
    clear(): void {
      clearTimeout(timer);
      outer.removeEventListener('abort', onAbort);
    },
  };
}

/** Whether this call is asked for as a stream. */
function streams(mode: StreamMode, request: ModelRequest): boolean {
  return mode === 'when-watched' ? (request.watched?.() ?? false) : mode;
}

export function createAiSdkProvider(options: AiSdkProviderOptions): Provider {
  const mode = options.stream ?? true;
  // The recording fetch of each call in progress (calls run concurrently), by call id.
  const callFetches = new Map<string, typeof globalThis.fetch>();
  let callCount = 0;
  const routedFetch: typeof globalThis.fetch = (input, init) => {
    const routed = takeCallId(init);
    const current = routed && callFetches.get(routed.id);
    if (!routed || !current) throw new Error('a model request outside of a model call');
    return current(input, routed.init);
  };
  const models = new Map<string, Promise<LanguageModel>>();
  function modelFor(modelId: string): Promise<LanguageModel> {
    let model = models.get(modelId);
    if (!model) {
      const built = options.model(modelId, routedFetch);
      // A failed build (a package that did not load) is tried again on the next call.
      built.catch(() => {
        if (models.get(modelId) === built) models.delete(modelId);
      });
      models.set(modelId, built);
      model = built;
    }
    return model;
  }

  async function call(request: ModelRequest): Promise<ModelResponse> {
    const recorder = createRecordingFetch(options.secrets, options.transport);
    const model = await modelFor(request.model);
    const id = String(++callCount);
    callFetches.set(id, recorder.fetch);
    const deadline = requestDeadline(request.signal, options.timeoutMs);
    try {
      return await callModel({ ...request, signal: deadline.signal }, model, recorder, id);
    } catch (error) {
      if (!deadline.timedOut()) throw error;
      throw new ProviderError(
        `no complete answer within ${options.timeoutMs} ms (timeout_ms); the request was closed`,
        { status: null, retryable: true, timedOut: true },
      );
    } finally {
      deadline.clear();
      callFetches.delete(id);
    }
  }

  async function callModel(
    request: ModelRequest,
    model: LanguageModel,
    recorder: ReturnType<typeof createRecordingFetch>,
    callId: string,
  ): Promise<ModelResponse> {
    const callOptions: LanguageModelV3CallOptions = {
      headers: { [CALL_HEADER]: callId },
      prompt: toPrompt(request),
      maxOutputTokens: request.max_tokens,
      temperature: request.temperature,
      abortSignal: request.signal,
      ...(request.tools.length > 0 && { tools: toTools(request.tools) }),
    };
    const modelName = `${options.name}/${request.model}`;

    if (!streams(mode, request)) {
      const result = await model.doGenerate(callOptions);
      const assembly = new StreamAssembly(undefined);
      for (const part of result.content) {
        if (part.type === 'text') assembly.text += part.text;
        if (part.type === 'tool-call') assembly.take(part);
      }
      const assistant: AssistantBody = {
        text: assembly.text,
        tool_calls: assembly.toolCalls(),
        usage: usageOf(result.usage),
        finish_reason: FINISH_REASONS[result.finishReason.unified],
        model: modelName,
      };
      return { assistant, raw: rawOf(recorder.recorded(), false) };
    }

    const { stream } = await model.doStream(callOptions);
    const assembly = new StreamAssembly(request.onDelta);
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        assembly.take(value);
      }
    } catch (error) {
      // Stop reading the body, so the connection closes instead of draining.
      await reader.cancel().catch(() => undefined);
      throw error;
    }
    // Some stacks end an aborted stream quietly: never mistake that for a short answer.
    if (request.signal.aborted) throw abortError();
    const assistant: AssistantBody = {
      text: assembly.text,
      tool_calls: assembly.toolCalls(),
      usage: assembly.usage,
      finish_reason: assembly.finishReason,
      model: modelName,
    };
    return { assistant, raw: rawOf(recorder.recorded(), true) };
  }

  return {
    name: options.name,
    async complete(request) {
      if (request.signal.aborted) throw abortError();
      try {
        return await call(request);
      } catch (error) {
        if (request.signal.aborted || isAbortError(error)) throw error;
        throw toProviderError(error);
      }
    },
  };
}
