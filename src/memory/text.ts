// Text rules shared by storage, search and the embedders: the fact size limit, word
// splitting, and how a free-text query becomes a safe FTS5 expression.

export const MAX_FACT_BYTES = 4096;
export const DEFAULT_NAMESPACE = 'default';

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

// C0/C1 control characters other than tab, line feed and carriage return: no fact needs
// them, and a "fact" made of them is invisible to whoever reads or searches it. The API
// holds every free text a person writes (persona, metadata) to the same rule.
export const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
// In a `u` regex a paired surrogate is one code point, so \p{Cs} matches only lone ones.
const LONE_SURROGATE = /\p{Cs}/u;
// Something a reader can see: not whitespace, not a control or format character.
const VISIBLE = /[^\s\p{Cc}\p{Cf}]/u;

/** null when the text is a valid fact, else what is wrong with it. */
export function factTextProblem(text: string): string | null {
  if (text.trim().length === 0) return 'must not be empty';
  // A lone surrogate cannot be encoded as UTF-8: storing it would silently turn it into
  // U+FFFD, so the fact read back would differ from the one written.
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it has a lone surrogate)';
  const control = CONTROL.exec(text);
  if (control) {
    const code = control[0].codePointAt(0) ?? 0;
    return `must not contain control characters (U+${code.toString(16).toUpperCase().padStart(4, '0')} at index ${control.index})`;
  }
  if (!VISIBLE.test(text)) return 'must contain a visible character';
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
// Korean is written with spaces, but particles attach to the word ("김민수는" is
// "김민수" + "는"), so its words are searched as substrings too.
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** A run longer than 3 characters becomes its overlapping trigrams; shorter runs stay whole. */
function trigramsOf(run: string): string[] {
  const chars = [...run];
  if (chars.length <= 3) return [run];
  const grams: string[] = [];
  for (let i = 0; i + 3 <= chars.length; i++) grams.push(chars.slice(i, i + 3).join(''));
  return grams;
}

function isUnspacedScript(word: string): boolean {
  return UNSPACED.test(word);
}

// Words so common that OR-ing them would match most facts: they only cost time and
// add noise to bm25. Dropped from the lexical query unless nothing else is left.
export const STOPWORDS: ReadonlySet<string> = new Set(
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
 * unless nothing else is left) and, for unspaced scripts, the run's trigrams (a
 * question "年会在哪里" is not a substring of the fact "公司的年会在上海举行", but shares
 * "年会在" with it; facts sharing more trigrams rank higher). The backend quotes each
 * term and OR-joins them, so operators in a query are plain words.
 */
export function lexicalTerms(query: string): { words: string[]; phrases: string[] } {
  const all = [...new Set(words(query))];
  const spaced = all.filter((word) => !isUnspacedScript(word));
  const content = spaced.filter((word) => !STOPWORDS.has(word));
  return {
    words: content.length > 0 ? content : spaced,
    phrases: [...new Set(all.filter(isUnspacedScript).flatMap(trigramsOf))],
  };
}
