import { z } from 'zod';
import { defineTool, ToolError } from '../tool.ts';
import { ARTIFACT_LIST_MAX, artifactPort, describeArtifact } from './artifact-tools-shared.ts';

export const artifactListTool = defineTool({
  name: 'artifact_list',
  family: 'artifact',
  effect: 'read_only',
  description:
    "List this tenant's artifacts by path, optionally under a prefix; paged with next_cursor.",
  input: z.strictObject({
    prefix: z
      .string()
      .max(512)
      .optional()
      .describe('only paths starting with this, e.g. "reports/"'),
    cursor: z.string().min(1).max(1024).optional().describe('next_cursor of the previous page'),
    limit: z.number().int().min(1).max(ARTIFACT_LIST_MAX).default(50),
  }),
  run: async ({ prefix, cursor, limit }, context) => {
    if (prefix !== undefined && /[\u0000-\u001f\u007f]/.test(prefix)) {
      throw new ToolError('INVALID_PATH', 'prefix must not contain control characters');
    }
    let page;
    try {
      page = await artifactPort(context).list(prefix ?? '', limit, cursor);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'VALIDATION_FAILED') {
        throw new ToolError('INVALID_CURSOR', 'cursor is not valid');
      }
      throw error;
    }
    return {
      items: page.items.map((item) => describeArtifact(item, context.tenant)),
      next_cursor: page.next_cursor,
    };
  },
});
