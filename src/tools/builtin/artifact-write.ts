import { z } from 'zod';
import { isKeelError } from '../../errors.ts';
import { defineTool, ToolError } from '../tool.ts';
import {
  ARTIFACT_WRITE_MAX_BYTES,
  artifactPort,
  describeArtifact,
  toArtifactPath,
} from './artifact-tools-shared.ts';

const CONTENT_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;[^\u0000-\u001f\u007f]*)?$/;

export const artifactWriteTool = defineTool({
  name: 'artifact_write',
  family: 'artifact',
  // Writing the same content to the same path twice leaves the same artifact.
  effect: 'idempotent',
  description:
    'Create or replace an artifact of this tenant (at most 1 MiB per call). content is text, or base64 with encoding "base64".',
  input: z.strictObject({
    path: z.string().min(1).max(600).describe('artifact path such as "notes/today.md"'),
    content: z.string().describe('the body'),
    content_type: z
      .string()
      .min(3)
      .max(255)
      .optional()
      .describe('default text/plain; charset=utf-8'),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
  }),
  run: async ({ path: requested, content, content_type, encoding }, context) => {
    const path = toArtifactPath(requested, context);
    if (content_type !== undefined && !CONTENT_TYPE.test(content_type)) {
      throw new ToolError(
        'INVALID_CONTENT_TYPE',
        `content_type "${content_type}" is not a media type`,
      );
    }
    if (encoding === 'base64' && !/^[A-Za-z0-9+/]*={0,2}$/.test(content)) {
      throw new ToolError('INVALID_BASE64', 'content is not base64');
    }
    const body =
      encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
    if (body.byteLength > ARTIFACT_WRITE_MAX_BYTES) {
      throw new ToolError(
        'ARTIFACT_TOO_LARGE',
        `content is ${body.byteLength} bytes; a tool may write at most ${ARTIFACT_WRITE_MAX_BYTES} per call`,
      );
    }
    const type =
      content_type ??
      (encoding === 'base64' ? 'application/octet-stream' : 'text/plain; charset=utf-8');
    const { artifact, created } = await artifactPort(context)
      .write(path, body, type, { written_by: { agent: context.agent, run_id: context.run_id } })
      .catch((error: unknown) => {
        // The tenant's artifact_bytes quota is the model's to handle (delete, write less).
        if (isKeelError(error, 'QUOTA_EXCEEDED')) throw new ToolError(error.code, error.message);
        throw error;
      });
    return { ...describeArtifact(artifact, context.tenant), created };
  },
});
