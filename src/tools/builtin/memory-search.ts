import { z } from 'zod';
import { SEARCH_MODES } from '../../memory/service.ts';
import { defineTool } from '../tool.ts';
import {
  asToolCall,
  MEMORY_SEARCH_MAX,
  memoryPort,
  namespaceInput,
} from './memory-tools-shared.ts';

export const memorySearchTool = defineTool({
  name: 'memory_search',
  family: 'memory',
  effect: 'read_only',
  description:
    'Search remembered facts by meaning and by words (hybrid). Each result has a score and its lexical_rank / semantic_rank.',
  input: z.strictObject({
    namespace: namespaceInput,
    query: z.string().min(1).max(4096).describe('what to look for, in any words'),
    limit: z.number().int().min(1).max(MEMORY_SEARCH_MAX).default(5),
    mode: z
      .enum(SEARCH_MODES)
      .default('fused')
      .describe('fused (default); lexical for exact words, names, codes; semantic for meaning'),
  }),
  run: async ({ namespace, query, limit, mode }, context) => {
    const results = await asToolCall(() =>
      memoryPort(context).search(namespace, query, limit, mode),
    );
    return {
      namespace,
      results: results.map((hit) => ({
        id: hit.id,
        text: hit.text,
        score: hit.score,
        lexical_rank: hit.lexical_rank,
        semantic_rank: hit.semantic_rank,
      })),
    };
  },
});
