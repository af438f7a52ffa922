// The retrieval-quality thresholds of issue 22 as a test (docs/benchmarks.md, "Retrieval
// quality"): both question sets of bench/memory-quality.ts with the default embedder
// (glove-sif-2 over the installed GloVe package, shared cache), every mode. No timing:
// the figures are deterministic, so a change that makes fusion worse than the better
// single side, or the embedding worse than the bar, fails here.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { QualityRow } from '../bench/memory-quality.ts';
import { measureQuality } from '../bench/memory-quality.ts';
import { createGloveSifEmbedder } from '../src/memory/embedders/glove-sif.ts';

const MARGIN = 0.02;

function row(rows: readonly QualityRow[], set: string, mode: string): QualityRow {
  const found = rows.find((candidate) => candidate.set === set && candidate.mode === mode);
  assert.ok(found, `${set}/${mode}`);
  return found;
}

describe('memory retrieval quality (default embedder)', () => {
  it('fused is never worse than the better single mode; the bars of issue 22 hold', async () => {
    const cacheDir = join(tmpdir(), 'keel-test-glove-cache');
    await mkdir(cacheDir, { recursive: true });
    const rows = await measureQuality(createGloveSifEmbedder({ cacheDir }));
    for (const item of rows) {
      console.log(
        `${item.set} ${item.mode}: recall@1 ${item.recall_at_1.toFixed(3)} recall@5 ${item.recall_at_5.toFixed(3)} MRR ${item.mrr.toFixed(3)} (${item.questions} questions, ${item.facts} facts)`,
      );
    }
    for (const set of ['paraphrase', 'keyword']) {
      const fused = row(rows, set, 'fused');
      assert.ok(fused.questions >= 50, `${set}: ${fused.questions} questions`);
      for (const metric of ['recall_at_1', 'recall_at_5', 'mrr'] as const) {
        const best = Math.max(
          row(rows, set, 'lexical')[metric],
          row(rows, set, 'semantic')[metric],
        );
        assert.ok(
          fused[metric] >= best - MARGIN,
          `${set} fused ${metric} ${fused[metric].toFixed(3)} < best single ${best.toFixed(3)} − ${MARGIN}`,
        );
      }
    }
    const paraphrase = row(rows, 'paraphrase', 'fused');
    assert.ok(paraphrase.recall_at_5 >= 0.85, `paraphrase recall@5 ${paraphrase.recall_at_5}`);
    assert.ok(paraphrase.recall_at_1 >= 0.6, `paraphrase recall@1 ${paraphrase.recall_at_1}`);
    const keyword = row(rows, 'keyword', 'fused');
    assert.ok(keyword.recall_at_1 >= 0.9, `keyword recall@1 ${keyword.recall_at_1}`);
  });
});
