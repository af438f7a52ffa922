// Retrieval quality of memory search (docs/memory.md: quality is measured, not assumed): the facts
// of memory-quality-set.ts among ≥ 200 distractors, each asked with its paraphrased
// question; recall@1, recall@5 and MRR (over the top 20) for lexical only, semantic
// only and fused, with the default embedder (glove-sif) and, for contrast, `hash`.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../src/memory/embedders/embedder.ts';
import { createGloveSifEmbedder } from '../src/memory/embedders/glove-sif.ts';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import type { SearchMode } from '../src/memory/service.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { distractorFacts, QUALITY_CASES } from './memory-quality-set.ts';
import { formatTable } from './support.ts';

export interface QualityRow {
  embedder: string;
  mode: SearchMode;
  questions: number;
  facts: number;
  recall_at_1: number;
  recall_at_5: number;
  mrr: number;
}

const TOP = 20;

async function measure(embedder: Embedder): Promise<QualityRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-quality-'));
  const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
  try {
    await store.createTenant('bench', {});
    const memory = createMemoryService({ store, embedder });
    const distractors = distractorFacts();
    for (const [index, text] of distractors.entries()) {
      await memory.put('bench', 'default', `d${String(index).padStart(3, '0')}`, text);
    }
    for (const [index, { fact }] of QUALITY_CASES.entries()) {
      await memory.put('bench', 'default', `q${String(index).padStart(3, '0')}`, fact);
    }
    const rows: QualityRow[] = [];
    for (const mode of ['lexical', 'semantic', 'fused'] as const) {
      let at1 = 0;
      let at5 = 0;
      let reciprocal = 0;
      for (const [index, { question }] of QUALITY_CASES.entries()) {
        const target = `q${String(index).padStart(3, '0')}`;
        const results = await memory.search('bench', 'default', question, TOP, mode);
        const rank = results.findIndex((hit) => hit.id === target) + 1;
        if (rank === 1) at1++;
        if (rank >= 1 && rank <= 5) at5++;
        if (rank >= 1) reciprocal += 1 / rank;
      }
      const n = QUALITY_CASES.length;
      rows.push({
        embedder: embedder.id,
        mode,
        questions: n,
        facts: n + distractors.length,
        recall_at_1: at1 / n,
        recall_at_5: at5 / n,
        mrr: reciprocal / n,
      });
    }
    return rows;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runMemoryQualityBench(cacheDir: string): Promise<QualityRow[]> {
  const rows = [
    ...(await measure(createGloveSifEmbedder({ cacheDir }))),
    ...(await measure(createHashEmbedder())),
  ];
  console.log(
    `\nmemory retrieval quality: ${rows[0]?.questions} paraphrased questions, ${rows[0]?.facts} facts in one namespace`,
  );
  console.log(
    formatTable(
      ['embedder', 'mode', 'recall@1', 'recall@5', 'MRR'],
      rows.map((row) => [
        row.embedder,
        row.mode,
        row.recall_at_1.toFixed(3),
        row.recall_at_5.toFixed(3),
        row.mrr.toFixed(3),
      ]),
    ),
  );
  return rows;
}
