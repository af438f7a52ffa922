import { z } from 'zod';
import { factIdForText } from '../../memory/service.ts';
import { defineTool } from '../tool.ts';
import {
  asToolCall,
  assertMayChange,
  factIdInput,
  factTextInput,
  memoryPort,
  namespaceInput,
} from './memory-tools-shared.ts';

export const memoryPutTool = defineTool({
  name: 'memory_put',
  family: 'memory',
  effect: 'idempotent',
  description:
    'Remember a fact (create or replace). Without an id, the id is derived from the text, so putting the same text twice keeps one fact.',
  input: z.strictObject({
    namespace: namespaceInput,
    id: factIdInput.optional(),
    text: factTextInput,
  }),
  run: async ({ namespace, id, text }, context) => {
    const port = memoryPort(context);
    assertMayChange(context, port, namespace);
    const { fact, created } = await asToolCall(() =>
      port.put(namespace, id ?? factIdForText(text), text),
    );
    return { namespace, id: fact.id, created, updated_at: fact.updated_at };
  },
});
