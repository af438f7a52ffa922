// Text rules shared by storage, search and the embedders: the fact size limit, word
// splitting, and how a free-text query becomes a safe FTS5 expression.

export const MAX_FACT_BYTES = 4096;
export const DEFAULT_NAMESPACE = 'default';

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** null when the text is a valid fact, else what is wrong with it. */
export function factTextProblem(text: string): string | null {
  if (text.trim().length === 0) return 'must not be empty';
  const bytes = utf8Length(text);
  if (bytes > MAX_FACT_BYTES) return `is ${bytes} bytes; a fact holds at most ${MAX_FACT_BYTES}`;
  return null;
}

// Letters and digits of any script; everything else (punctuation, FTS operators,
// quotes) separates words, so no character of a query reaches FTS5 as syntax.
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** Lower-cased words in order (Unicode-aware). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []) as string[];
}

// Scripts written without spaces: a "word" of these is a whole phrase, so it is
// searched as a substring through the trigram index instead of the word index.
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

function isUnspacedScript(word: string): boolean {
  return UNSPACED.test(word);
}

// Words so common that OR-ing them would match most facts: they only cost time and
// add noise to bm25. Dropped from the lexical query unless nothing else is left.
const STOPWORDS = new Set(
  (
    'a an the and or but if of to in on at by for with from as is are was were be been being ' +
    'am do does did doing have has had having i me my mine we us our you your he him his she ' +
    'her it its they them their this that these those what which who whom whose when where ' +
    'why how there here not no so than then too very can could would should will shall may ' +
    'might must just about into over under again any all some such only own same s t'
  ).split(' '),
);

/**
 * The query's search terms: distinct words of spaced scripts (common words dropped
 * unless nothing else is left) and runs of unspaced scripts. The backend quotes each
 * term and OR-joins them, so operators in a query are plain words.
 */
export function lexicalTerms(query: string): { words: string[]; phrases: string[] } {
  const all = [...new Set(words(query))];
  const spaced = all.filter((word) => !isUnspacedScript(word));
  const content = spaced.filter((word) => !STOPWORDS.has(word));
  return {
    words: content.length > 0 ? content : spaced,
    phrases: all.filter(isUnspacedScript),
  };
}
