import { z } from 'zod';
import { defineTool } from '../tool.ts';
import {
  asToolCall,
  assertMayChange,
  factIdInput,
  memoryPort,
  namespaceInput,
} from './memory-tools-shared.ts';

export const memoryDeleteTool = defineTool({
  name: 'memory_delete',
  family: 'memory',
  effect: 'idempotent',
  description: 'Forget a fact. Deleting a fact that is already gone is not an error.',
  input: z.strictObject({ namespace: namespaceInput, id: factIdInput }),
  run: async ({ namespace, id }, context) => {
    const port = memoryPort(context);
    assertMayChange(context, port, namespace);
    const deleted = await asToolCall(() => port.delete(namespace, id));
    return { namespace, id, deleted };
  },
});
