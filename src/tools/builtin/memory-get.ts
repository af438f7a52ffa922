import { z } from 'zod';
import { defineTool, ToolError } from '../tool.ts';
import { asToolCall, factIdInput, memoryPort, namespaceInput } from './memory-tools-shared.ts';

export const memoryGetTool = defineTool({
  name: 'memory_get',
  family: 'memory',
  effect: 'read_only',
  description: 'Read one remembered fact by id.',
  input: z.strictObject({ namespace: namespaceInput, id: factIdInput }),
  run: async ({ namespace, id }, context) => {
    const fact = await asToolCall(() => memoryPort(context).get(namespace, id));
    if (!fact) throw new ToolError('MEMORY_NOT_FOUND', `no fact ${id} in namespace ${namespace}`);
    return {
      namespace,
      id: fact.id,
      text: fact.text,
      metadata: fact.metadata,
      created_at: fact.created_at,
      updated_at: fact.updated_at,
    };
  },
});
