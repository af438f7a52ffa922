// Token counting for compaction (docs/compaction.md): a real tokenizer (gpt-tokenizer,
// o200k_base) loaded on first use, plus a cheap upper bound. A BPE token encodes at least
// one byte, so a text's UTF-8 length bounds its token count from above: while the bound
// of a model input fits the budget, nothing is tokenized at all.

import type { ToolDefinition } from '../providers/provider.ts';
import type { Agent, RunEntry, ThreadMessage } from '../types.ts';

/** Chat framing per message (role markers); what OpenAI's cookbook counts. */
export const MESSAGE_OVERHEAD = 4;

// System prompts and tool definitions come back every turn: counted once per worker.
const MEMO_MIN_LENGTH = 256;
const MEMO_SIZE = 64;
/** Longer texts are not tokenized (see count). */
export const EXACT_MAX_CHARS = 6_000;

type Tokenizer = { countTokens(text: string): number };

interface ToolCount {
  name: string;
  description: string;
  text: string;
  bound: number;
  exact: number | null;
}

/** The model windows keel knows (tokens); `context_tokens` defaults from them. */
const MODEL_WINDOWS: readonly (readonly [RegExp, number])[] = [
  [/^fixture\//, 32_768],
  [/gpt-4\.1/, 1_047_576],
  [/gpt-5/, 400_000],
  [/gpt-4o|(^|\/)o[134](-|$)/, 128_000],
  [/claude/, 200_000],
  [/gemini/, 1_048_576],
];
/** A model keel does not know (e.g. a local one) is assumed small. */
const UNKNOWN_MODEL_WINDOW = 32_768;
const MIN_CONTEXT_TOKENS = 1_024;

export function modelWindow(model: string): number {
  return MODEL_WINDOWS.find(([pattern]) => pattern.test(model))?.[1] ?? UNKNOWN_MODEL_WINDOW;
}

/** The model input budget: `context_tokens`, else the model's window minus the answer. */
export function contextBudget(agent: Pick<Agent, 'model' | 'max_tokens' | 'context_tokens'>) {
  if (agent.context_tokens !== undefined) return agent.context_tokens;
  return Math.max(MIN_CONTEXT_TOKENS, modelWindow(agent.model) - agent.max_tokens);
}

/** The text of an entry as it costs the model (a compaction note costs nothing: not sent). */
export function entryText(entry: RunEntry): string {
  switch (entry.kind) {
    case 'user':
      return entry.body.text;
    case 'note':
      return entry.body.compaction ? '' : entry.body.text;
    case 'assistant':
      return entry.body.tool_calls.length === 0
        ? entry.body.text
        : `${entry.body.text}${JSON.stringify(entry.body.tool_calls)}`;
    case 'tool_result':
      return JSON.stringify(entry.body.ok ? (entry.body.result ?? null) : entry.body.error);
  }
}

export class TokenCounter {
  private tokenizer: Tokenizer | null = null;
  private readonly memo = new Map<string, number>();
  private readonly entryCounts = new WeakMap<object, number>();
  private readonly toolCounts = new WeakMap<object, ToolCount>();

  /** Loads the tokenizer (once; a few hundred ms the first time in a process). */
  async load(): Promise<this> {
    this.tokenizer ??= (await import('gpt-tokenizer/encoding/o200k_base')) as Tokenizer;
    return this;
  }

  get loaded(): boolean {
    return this.tokenizer !== null;
  }

  /**
   * The exact count; load() first. A text over EXACT_MAX_CHARS gets its byte bound
   * instead: BPE merges are quadratic in a run of symbols ("[[[[…" of 40 000 characters
   * takes a second), and a bound only makes compaction start earlier.
   */
  count(text: string): number {
    if (!this.tokenizer) throw new Error('TokenCounter.count before load()');
    if (text.length > EXACT_MAX_CHARS) return Buffer.byteLength(text);
    return this.tokenizer.countTokens(text);
  }

  /** The exact count of a text that comes back every turn (system prompt, tools). */
  private recurring(text: string): number {
    if (text.length < MEMO_MIN_LENGTH) return this.count(text);
    const known = this.memo.get(text);
    if (known !== undefined) return known;
    const counted = this.count(text);
    if (this.memo.size >= MEMO_SIZE) this.memo.delete(this.memo.keys().next().value as string);
    this.memo.set(text, counted);
    return counted;
  }

  /** A thread message: its stored count, else exact (load() first) or the byte bound. */
  message(message: ThreadMessage, exact: boolean): number {
    if (message.tokens !== undefined) return message.tokens + MESSAGE_OVERHEAD;
    if (!exact) return Buffer.byteLength(message.content) + MESSAGE_OVERHEAD;
    let counted = this.entryCounts.get(message);
    if (counted === undefined) {
      counted = this.count(message.content);
      this.entryCounts.set(message, counted);
    }
    return counted + MESSAGE_OVERHEAD;
  }

  /** An entry of the run: exact (cached per entry object) or the byte bound. */
  entry(entry: RunEntry, exact: boolean): number {
    if (entry.kind === 'note' && entry.body.compaction) return 0;
    let counted = this.entryCounts.get(entry);
    if (counted !== undefined) return counted + MESSAGE_OVERHEAD;
    const text = entryText(entry);
    if (!exact) return Buffer.byteLength(text) + MESSAGE_OVERHEAD;
    counted = this.count(text);
    this.entryCounts.set(entry, counted);
    return counted + MESSAGE_OVERHEAD;
  }

  /** System prompt and tool definitions: exact or the byte bound. */
  fixed(system: string, tools: readonly ToolDefinition[], exact: boolean): number {
    let total = (exact ? this.recurring(system) : Buffer.byteLength(system)) + MESSAGE_OVERHEAD;
    for (const tool of tools) total += this.tool(tool, exact);
    return total;
  }

  /**
   * A tool definition as JSON. Its schema object is the registry's own, the same every
   * attempt, so the text is built and measured once per worker, not per turn.
   */
  private tool(tool: ToolDefinition, exact: boolean): number {
    let known = this.toolCounts.get(tool.input_schema);
    if (!known || known.name !== tool.name || known.description !== tool.description) {
      const text = JSON.stringify(tool);
      known = { name: tool.name, description: tool.description, text, bound: 0, exact: null };
      known.bound = Buffer.byteLength(text);
      this.toolCounts.set(tool.input_schema, known);
    }
    if (!exact) return known.bound;
    known.exact ??= this.count(known.text);
    return known.exact;
  }
}
