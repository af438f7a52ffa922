import { z } from 'zod';
import { defineTool, ToolError } from '../tool.ts';
import {
  ARTIFACT_READ_INLINE_BYTES,
  artifactPort,
  decodeText,
  describeArtifact,
  isTextContentType,
  toArtifactPath,
} from './artifact-tools-shared.ts';

export const artifactReadTool = defineTool({
  name: 'artifact_read',
  family: 'artifact',
  effect: 'read_only',
  description:
    'Read an artifact of this tenant by path (or artifact:// reference). Text up to 256 KiB is returned; larger or binary content comes back as metadata and an artifact:// reference.',
  input: z.strictObject({
    path: z.string().min(1).max(600).describe('artifact path such as "reports/2026-01.md"'),
  }),
  run: async ({ path: requested }, context) => {
    const path = toArtifactPath(requested, context);
    const artifact = await artifactPort(context).read(path);
    if (!artifact) throw new ToolError('ARTIFACT_NOT_FOUND', `artifact ${path} not found`);
    const described = describeArtifact(artifact, context.tenant);
    if (!isTextContentType(artifact.content_type)) {
      return { ...described, inline: false, reason: 'binary content type' };
    }
    if (artifact.size_bytes > ARTIFACT_READ_INLINE_BYTES) {
      return {
        ...described,
        inline: false,
        reason: `larger than ${ARTIFACT_READ_INLINE_BYTES} bytes`,
      };
    }
    const text = decodeText(artifact.body);
    if (text === null) return { ...described, inline: false, reason: 'not valid UTF-8 text' };
    return { ...described, inline: true, text };
  },
});
