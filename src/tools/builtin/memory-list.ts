import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { asToolCall, MEMORY_LIST_MAX, memoryPort, namespaceInput } from './memory-tools-shared.ts';

export const memoryListTool = defineTool({
  name: 'memory_list',
  family: 'memory',
  effect: 'read_only',
  description:
    'List remembered facts of a namespace by id, a page at a time: pass next_cursor back until it is null. A cursor works only for the namespace it came from.',
  input: z.strictObject({
    namespace: namespaceInput,
    cursor: z.string().min(1).max(1024).optional().describe('next_cursor of the previous page'),
    limit: z.number().int().min(1).max(MEMORY_LIST_MAX).default(50),
  }),
  run: async ({ namespace, cursor, limit }, context) => {
    const port = memoryPort(context);
    const page = await asToolCall(() => port.list(namespace, limit, cursor));
    port.scans.listed(context.run_id, namespace, cursor, page.next_cursor);
    return {
      namespace,
      items: page.items.map((fact) => ({
        id: fact.id,
        text: fact.text,
        updated_at: fact.updated_at,
      })),
      next_cursor: page.next_cursor,
    };
  },
});
