// T/openai: a tenant's agents behind an OpenAI-compatible base URL, so any OpenAI client
// or chat UI can talk to a keel agent (docs/channels.md). `model` names the agent, the
// scope comes from `x-keel-scope` (else `openai:<user>`), and only the last user message
// becomes the turn: keel keeps the thread itself. Errors keep keel's codes but travel in
// OpenAI's error shape, so OpenAI clients raise their usual typed errors.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { enqueueTurn } from '../../runtime/enqueue.ts';
import { waitForRun } from '../../runtime/wait.ts';
import type { Run } from '../../types.ts';
import { isTerminal } from '../../types.ts';
import type { AgentStore, RunStore, StoreChanges } from '../../store/store.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { nameSchema, scopeSchema, tenantParams } from '../schemas.ts';
import { abortOnDisconnect } from '../streams.ts';

type Deps = ApiDepsWith<RunStore & StoreChanges & AgentStore>;

/** How long a non-streaming request (or a stream) waits for the run before giving up. */
const WAIT_MS = 300_000;
/** Agents read per store call for the model list (each carries its whole spec). */
const MODEL_LIST_PAGE = 50;

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const messageSchema = z.looseObject({
  role: z.string().min(1).max(32),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
});

// Loose: OpenAI clients send many sampling fields keel has no use for (temperature…).
const chatBody = z.looseObject({
  model: nameSchema.describe('the agent name'),
  messages: z.array(messageSchema).min(1).max(10_000),
  stream: z.boolean().nullish(),
  user: z.string().min(1).max(200).nullish(),
});

const chatHeaders = z.looseObject({
  'x-keel-scope': scopeSchema.optional().describe('the thread; default openai:<user>'),
});

/** The text of the last user message: only it becomes the turn. */
function lastUserText(messages: z.infer<typeof messageSchema>[]): string {
  const last = messages.findLast((message) => message.role === 'user');
  if (!last) throw new KeelError('VALIDATION_FAILED', 'body.messages: no message with role user');
  const content = last.content;
  const text =
    typeof content === 'string'
      ? content
      : (content ?? [])
          .filter((part) => part.type === 'text' && typeof part.text === 'string')
          .map((part) => part.text)
          .join('\n');
  if (text.length === 0) {
    throw new KeelError('VALIDATION_FAILED', 'body.messages: the last user message has no text');
  }
  return text;
}

function scopeFor(header: string | undefined, user: string | null | undefined): string {
  if (header) return header;
  const scope = `openai:${user ?? 'default'}`;
  const parsed = scopeSchema.safeParse(scope);
  if (!parsed.success) throw new KeelError('VALIDATION_FAILED', 'body.user: not a valid scope');
  return parsed.data;
}

function replyText(run: Run): string {
  const reply = run.output?.reply;
  return typeof reply === 'string' ? reply : JSON.stringify(run.output ?? {});
}

/** A run that did not succeed becomes an error the OpenAI client can show. */
function runError(run: Run, timedOut: boolean): KeelError {
  if (timedOut) return new KeelError('OVERLOADED', `run ${run.run_id} is still ${run.status}`);
  const reason = run.error ? `${run.error.code}: ${run.error.message}` : run.status;
  return new KeelError('CONFLICT', `run ${run.run_id} ended ${run.status} (${reason})`);
}

/** OpenAI's error types by HTTP status, as its clients map them to exception classes. */
function openaiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Rewrites keel's `{error: {code, message, request_id}}` into OpenAI's error shape. */
async function toOpenaiErrorShape(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
  try {
    const body = JSON.parse(payload) as { error?: { code?: string; message?: string } };
    if (!body.error?.code) return payload;
    return JSON.stringify({
      error: {
        message: body.error.message ?? '',
        type: openaiErrorType(reply.statusCode),
        param: null,
        code: body.error.code,
        request_id: String(request.id),
      },
    });
  } catch {
    return payload;
  }
}

export async function openaiRoutes(app: ZodApp, deps: Deps): Promise<void> {
  const { store } = deps;
  // Encapsulated: the error-shape rewrite applies to these routes only.
  await app.register(async (scoped: ZodApp) => {
    scoped.addHook('onSend', toOpenaiErrorShape);

    scoped.get(
      '/v1/tenants/:tenant/openai/models',
      { config: { auth: 'tenant' }, schema: { tags: ['openai'], params: tenantParams } },
      async (request) => {
        // OpenAI's model list has no paging: every agent (at most tenant_limits.agents),
        // read a page at a time so only names and times are ever held, never every spec.
        const data = [];
        let cursor: string | undefined;
        do {
          const page = await store.listAgents(request.params.tenant, MODEL_LIST_PAGE, cursor);
          for (const agent of page.items) {
            data.push({
              id: agent.name,
              object: 'model',
              created: Math.floor(Date.parse(agent.created_at) / 1000),
              owned_by: request.params.tenant,
            });
          }
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined);
        return { object: 'list', data };
      },
    );

    scoped.post(
      '/v1/tenants/:tenant/openai/chat/completions',
      {
        config: { auth: 'tenant', long_lived: true },
        bodyLimit: deps.config.limits.turn_body_bytes,
        schema: { tags: ['openai'], params: tenantParams, body: chatBody, headers: chatHeaders },
      },
      async (request, reply) => {
        const { tenant } = request.params;
        const body = request.body;
        const text = lastUserText(body.messages);
        const scope = scopeFor(request.headers['x-keel-scope'], body.user);
        const agent = await store.getAgent(tenant, body.model);
        if (!agent) throw new KeelError('AGENT_NOT_FOUND', `agent ${body.model} not found`);
        const { run } = await enqueueTurn(store, {
          tenant,
          agent: body.model,
          scope,
          payload: { text },
          request_id: null,
          delivery: null,
          on_busy: 'enqueue',
          source: 'api',
          max_queued: deps.config.tenant_limits.queued_runs,
        });
        const id = `chatcmpl-${run.run_id}`;
        const created = Math.floor(Date.now() / 1000);
        // Also when the client left during the reads above (streams.ts).
        const disconnect = abortOnDisconnect(reply);

        if (!body.stream) {
          const result = await waitForRun(store, tenant, run.run_id, WAIT_MS, disconnect.signal);
          if (!result) throw new KeelError('RUN_NOT_FOUND', `run ${run.run_id} not found`);
          if (result.run.status !== 'succeeded') throw runError(result.run, result.timed_out);
          const usage = result.run.usage;
          return {
            id,
            object: 'chat.completion',
            created,
            model: body.model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: replyText(result.run), refusal: null },
                logprobs: null,
                finish_reason: 'stop',
              },
            ],
            usage: {
              prompt_tokens: usage.input_tokens,
              completion_tokens: usage.output_tokens,
              total_tokens: usage.input_tokens + usage.output_tokens,
            },
          };
        }

        void reply.hijack();
        const raw = reply.raw;
        raw.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
          'x-request-id': request.id,
        });
        const chunk = (delta: object, finish: string | null): void => {
          if (raw.writableEnded) return;
          const data = {
            id,
            object: 'chat.completion.chunk',
            created,
            model: body.model,
            choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
          };
          raw.write(`data: ${JSON.stringify(data)}\n\n`);
        };
        chunk({ role: 'assistant', content: '' }, null);
        // The model's text deltas go out as they come; the run's terminal event closes
        // the stream. A run whose deltas were not seen here (another worker process, a
        // resumed attempt) still streams its final text, in one chunk.
        let streamed = '';
        const unsubscribe = deps.live?.subscribe(run.run_id, (event) => {
          if (event.type !== 'model.delta' || event.data.text.length === 0) return;
          streamed += event.data.text;
          chunk({ content: event.data.text }, null);
        });
        try {
          const result = await waitForRun(store, tenant, run.run_id, WAIT_MS, disconnect.signal);
          const final = result?.run;
          if (final?.status === 'succeeded') {
            const text = replyText(final);
            if (!streamed.endsWith(text)) chunk({ content: text }, null);
            chunk({}, 'stop');
          } else if (final && isTerminal(final.status)) {
            const error = runError(final, false);
            raw.write(
              `data: ${JSON.stringify({ error: { message: error.message, type: 'server_error', param: null, code: final.error?.code ?? final.status } })}\n\n`,
            );
          } else {
            chunk({}, 'length');
          }
        } finally {
          unsubscribe?.();
          if (!raw.writableEnded) raw.end('data: [DONE]\n\n');
        }
      },
    );
  });
}
