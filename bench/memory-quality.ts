// Retrieval quality of memory search (docs/memory.md: quality is measured, not assumed):
// two question sets, each in its own namespace among ≥ 240 generated distractors —
// paraphrase (memory-quality-set.ts: questions sharing almost no word with their fact)
// and keyword (memory-quality-keyword-set.ts: names, numbers, codes, rare words, CJK,
// mixed language, beside near-miss facts). recall@1, recall@5 and MRR (over the top
// 20) for lexical only, semantic only and fused, with the default embedder and, for
// contrast, `hash`. No timing: the figures are deterministic (test/memory-quality.test.ts
// holds the thresholds).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../src/memory/embedders/embedder.ts';
import { createGloveSifEmbedder } from '../src/memory/embedders/glove-sif.ts';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import type { SearchMode } from '../src/memory/service.ts';
import { createMemoryService, SEARCH_MODES } from '../src/memory/service.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { KEYWORD_CASES, KEYWORD_CONFUSERS } from './memory-quality-keyword-set.ts';
import type { QualityCase } from './memory-quality-set.ts';
import { distractorFacts, QUALITY_CASES } from './memory-quality-set.ts';
import { formatTable } from './support.ts';

export type QualitySetName = 'paraphrase' | 'keyword';

interface QualitySet {
  name: QualitySetName;
  cases: readonly QualityCase[];
  /** Facts never asked for, besides the generated distractors. */
  extra: readonly string[];
}

export const QUALITY_SETS: readonly QualitySet[] = [
  { name: 'paraphrase', cases: QUALITY_CASES, extra: [] },
  { name: 'keyword', cases: KEYWORD_CASES, extra: KEYWORD_CONFUSERS },
];

export interface QualityRow {
  embedder: string;
  set: QualitySetName;
  mode: SearchMode;
  questions: number;
  facts: number;
  recall_at_1: number;
  recall_at_5: number;
  mrr: number;
}

const TOP = 20;

export async function measureQuality(embedder: Embedder): Promise<QualityRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-quality-'));
  const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
  try {
    await store.createTenant('bench', {});
    const memory = createMemoryService({ store, embedder });
    const distractors = distractorFacts();
    const rows: QualityRow[] = [];
    for (const set of QUALITY_SETS) {
      const others = [...distractors, ...set.extra];
      for (const [index, text] of others.entries()) {
        await memory.put('bench', set.name, `d${String(index).padStart(3, '0')}`, text);
      }
      for (const [index, { fact }] of set.cases.entries()) {
        await memory.put('bench', set.name, `q${String(index).padStart(3, '0')}`, fact);
      }
      for (const mode of SEARCH_MODES) {
        let at1 = 0;
        let at5 = 0;
        let reciprocal = 0;
        for (const [index, { question }] of set.cases.entries()) {
          const target = `q${String(index).padStart(3, '0')}`;
          const results = await memory.search('bench', set.name, question, TOP, mode);
          const rank = results.findIndex((hit) => hit.id === target) + 1;
          if (rank === 1) at1++;
          if (rank >= 1 && rank <= 5) at5++;
          if (rank >= 1) reciprocal += 1 / rank;
        }
        const n = set.cases.length;
        rows.push({
          embedder: embedder.id,
          set: set.name,
          mode,
          questions: n,
          facts: n + others.length,
          recall_at_1: at1 / n,
          recall_at_5: at5 / n,
          mrr: reciprocal / n,
        });
      }
    }
    return rows;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runMemoryQualityBench(cacheDir: string): Promise<QualityRow[]> {
  const rows = [
    ...(await measureQuality(createGloveSifEmbedder({ cacheDir }))),
    ...(await measureQuality(createHashEmbedder())),
  ];
  const sizes = QUALITY_SETS.map(
    (set) =>
      `${set.name}: ${rows.find((row) => row.set === set.name)?.questions} questions among ${rows.find((row) => row.set === set.name)?.facts} facts`,
  );
  console.log(`\nmemory retrieval quality (${sizes.join('; ')})`);
  console.log(
    formatTable(
      ['embedder', 'set', 'mode', 'recall@1', 'recall@5', 'MRR'],
      rows.map((row) => [
        row.embedder,
        row.set,
        row.mode,
        row.recall_at_1.toFixed(3),
        row.recall_at_5.toFixed(3),
        row.mrr.toFixed(3),
      ]),
    ),
  );
  return rows;
}
