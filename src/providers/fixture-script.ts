// The fixture model's script (docs/fixture-model.md): directives read from the latest user
// entry, and the pure decision "what does the model answer at this point of the
// conversation". Pure so the same rules serve the in-process provider and the HTTP
// fixture server (fixture-wire.ts) — and so a resumed run sees exactly the same behaviour.

import type { JsonObject, JsonValue, RunEntry, ToolResultBody } from '../types.ts';
import type { FixtureDirectiveName } from './fixture-directives.ts';

export interface ScriptedCall {
  name: string;
  /** Raw argument text, passed through unparsed (tests may send invalid JSON on purpose). */
  arguments: string;
}

export interface FixtureScript {
  calls: ScriptedCall[];
  parallel: boolean;
  forever: boolean;
  sleepMs: number;
  fail: { count: number; status: number } | null;
  reply: string | null;
  /** The `@json` object; null when absent or when its text is not a JSON object. */
  json: JsonObject | null;
  /** `@json` text that did not parse: answered as plain text so the run can see it. */
  jsonText: string | null;
  streamChunks: number;
  /** `@overflow n`: refuse inputs over n tokens (the fixture's estimate) as too long. */
  overflowTokens: number | null;
  /** The non-directive lines, joined and trimmed. */
  text: string;
}

/** What the fixture knows about the run: its latest user text and what followed it. */
export interface FixtureConversation {
  runId: string | null;
  userText: string;
  /** Model responses recorded after the latest user entry. */
  steps: number;
  /** As read back from the transcript: an error code is whatever the wire carried. */
  results: (Pick<ToolResultBody, 'name' | 'ok' | 'result'> & {
    error?: { code: string; message: string };
  })[];
}

export type FixtureDecision =
  { kind: 'calls'; calls: ScriptedCall[] } | { kind: 'answer'; text: string };

const FOREVER_TOOL = 'clock_now';

function wholeNumber(text: string | undefined): number | null {
  if (text === undefined || !/^\d+$/.test(text)) return null;
  return Number(text);
}

/**
 * What each directive does to the script: keyed by the documented list, so a directive
 * cannot be parsed without being documented (or documented without being parsed).
 */
const APPLY: Record<FixtureDirectiveName, (script: FixtureScript, rest: string) => void> = {
  call(script, rest) {
    const call = /^(\S+)(?:\s+(.*))?$/.exec(rest);
    if (call?.[1]) script.calls.push({ name: call[1], arguments: call[2]?.trim() || '{}' });
  },
  parallel(script) {
    script.parallel = true;
  },
  forever(script) {
    script.forever = true;
  },
  sleep(script, rest) {
    script.sleepMs = wholeNumber(rest) ?? 0;
  },
  fail(script, rest) {
    const [count, status] = rest.split(/\s+/);
    const n = wholeNumber(count);
    const code = wholeNumber(status);
    if (n !== null && code !== null) script.fail = { count: n, status: code };
  },
  reply(script, rest) {
    script.reply = rest;
  },
  json(script, rest) {
    script.json = parseObject(rest);
    script.jsonText = script.json ? null : rest;
  },
  stream(script, rest) {
    script.streamChunks = wholeNumber(rest) ?? 0;
  },
  overflow(script, rest) {
    script.overflowTokens = wholeNumber(rest);
  },
};

export function parseFixtureScript(userText: string): FixtureScript {
  const script: FixtureScript = {
    calls: [],
    parallel: false,
    forever: false,
    sleepMs: 0,
    fail: null,
    reply: null,
    json: null,
    jsonText: null,
    streamChunks: 0,
    overflowTokens: null,
    text: '',
  };
  const plain: string[] = [];
  for (const line of userText.split('\n')) {
    const match = /^\s*@(\w+)(?:\s+(.*))?$/.exec(line);
    const name = match?.[1];
    if (name !== undefined && Object.hasOwn(APPLY, name)) {
      APPLY[name as FixtureDirectiveName](script, (match?.[2] ?? '').trim());
    } else {
      plain.push(line);
    }
  }
  script.text = plain.join('\n').trim();
  return script;
}

function parseObject(text: string): JsonObject | null {
  try {
    const value = JSON.parse(text) as JsonValue;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** Reads the run's own entries: the latest user entry and everything after it. */
export function fixtureConversation(entries: readonly RunEntry[]): FixtureConversation {
  const start = entries.findLastIndex((item) => item.kind === 'user');
  const user = start >= 0 ? entries[start] : undefined;
  const conversation: FixtureConversation = {
    runId: user?.run_id ?? entries[0]?.run_id ?? null,
    userText: user?.kind === 'user' ? user.body.text : '',
    steps: 0,
    results: [],
  };
  for (const entry of entries.slice(start + 1)) {
    if (entry.kind === 'assistant') conversation.steps += 1;
    if (entry.kind === 'tool_result') conversation.results.push(entry.body);
  }
  return conversation;
}

/** While fewer @call lines have results than exist, emit the next call; then answer. */
export function decideFixtureStep(
  script: FixtureScript,
  conversation: FixtureConversation,
): FixtureDecision {
  const done = conversation.results.length;
  if (script.parallel && script.calls.length > 0 && done === 0) {
    return { kind: 'calls', calls: script.calls };
  }
  const next = script.parallel ? undefined : script.calls[done];
  if (next) return { kind: 'calls', calls: [next] };
  if (script.forever) return { kind: 'calls', calls: [{ name: FOREVER_TOOL, arguments: '{}' }] };
  return { kind: 'answer', text: finalText(script, conversation) };
}

function finalText(script: FixtureScript, conversation: FixtureConversation): string {
  // A JSON answer stays a JSON object: tool lines would make it unparseable.
  if (script.json) return JSON.stringify(script.json);
  const head = script.jsonText ?? script.reply ?? `echo: ${script.text}`;
  const lines = conversation.results.map(
    (result) =>
      `${result.name}: ${result.ok ? JSON.stringify(result.result ?? null) : (result.error?.code ?? 'ERROR')}`,
  );
  return [head, ...lines].join('\n');
}

/** Splits text into n nearly equal chunks (fewer when the text is shorter than n). */
export function splitIntoChunks(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(n, text.length));
  const size = Math.ceil(text.length / count);
  const chunks: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) {
    chunks.push(text.slice(offset, offset + size));
  }
  return chunks.length > 0 ? chunks : [''];
}

/**
 * How often each conversation has failed on purpose (`@fail n`): the next failure's
 * number, or null once all n are spent. Bounded: conversations that never succeed must
 * not grow it forever, so the oldest is forgotten first.
 */
export class ScriptedFailures {
  private readonly counts = new Map<string, number>();
  constructor(private readonly remembered = 10_000) {}

  next(key: string, count: number): number | null {
    const failed = this.counts.get(key) ?? 0;
    if (failed >= count) return null;
    if (this.counts.size >= this.remembered && !this.counts.has(key)) {
      const oldest = this.counts.keys().next().value;
      if (oldest !== undefined) this.counts.delete(oldest);
    }
    this.counts.set(key, failed + 1);
    return failed + 1;
  }
}

/** The fixture's rough, deterministic token estimate: four characters a token. */
export function fixtureTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** `@overflow n` and an input of `inputTokens`: the refusal's message, or null. */
export function fixtureOverflow(script: FixtureScript, inputTokens: number): string | null {
  const limit = script.overflowTokens;
  if (limit === null || inputTokens <= limit) return null;
  return `This model's maximum context length is ${limit} tokens, but the input has ${inputTokens} tokens (context_length_exceeded)`;
}

const SUMMARY_QUOTE = 60;

/**
 * The fixture's answer to a compaction's summarising request (its transcript: one
 * `role: text` paragraph per message): deterministic and short, naming how much it
 * folded and quoting the first and last user lines.
 */
export function fixtureSummary(transcript: string): string {
  const paragraphs = transcript.split('\n\n');
  const users = paragraphs.filter((paragraph) => paragraph.startsWith('user: '));
  const quote = (text: string | undefined) =>
    JSON.stringify((text ?? '').slice('user: '.length, 'user: '.length + SUMMARY_QUOTE));
  const earlier = paragraphs.some((paragraph) => paragraph.startsWith('(summary'))
    ? ' after an earlier summary'
    : '';
  return `summary of ${paragraphs.length} messages${earlier}: ${users.length} from the user, first ${quote(users[0])}, last ${quote(users[users.length - 1])}`;
}

/**
 * The fact the fixture model writes for a memory flush request (docs/fixture-model.md):
 * the first user message of the transcript, quoted.
 */
export function fixtureFlushFact(transcript: string): string {
  const first = transcript.split('\n\n').find((paragraph) => paragraph.startsWith('user: '));
  const quoted = (first ?? transcript).replace(/^user: /, '').slice(0, SUMMARY_QUOTE);
  return `the user said: ${JSON.stringify(quoted)}`;
}

/**
 * The fixture's answer text for a request: none for a memory flush, the summary for a
 * compaction's request, else the decision's answer (empty when it calls tools).
 */
export function fixtureAnswerText(
  kind: { flushing: boolean; summarising: boolean },
  decision: FixtureDecision,
  userText: string,
): string {
  if (kind.flushing) return '';
  if (kind.summarising) return fixtureSummary(userText);
  return decision.kind === 'answer' ? decision.text : '';
}
