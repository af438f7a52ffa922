import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { asWebToolErrors, webPort } from './web-fetch.ts';

export const webSearchTool = defineTool({
  name: 'web_search',
  family: 'web',
  effect: 'read_only',
  description: 'Search the web; returns up to `limit` results with title, url and snippet.',
  input: z.strictObject({
    query: z.string().min(1).max(500),
    limit: z.number().int().min(1).max(20).default(5),
  }),
  run: async ({ query, limit }, context) => {
    const results = await asWebToolErrors(() =>
      webPort(context.ports).search(query, limit, context.signal),
    );
    return { query, results: results.map((hit) => ({ ...hit })) };
  },
});
