// What the three artifact tools share: the port check, path/ref parsing, and the
// text-or-reference decision of artifact_read.

import type { ArtifactStat, JsonObject } from '../../types.ts';
import type { ToolContext } from '../tool.ts';
import { ToolError } from '../tool.ts';
import type { ArtifactPort } from './artifact-port.ts';
import { artifactPathProblem, artifactRef } from './artifact-path.ts';

export const ARTIFACT_READ_INLINE_BYTES = 256 * 1024;
export const ARTIFACT_WRITE_MAX_BYTES = 1024 * 1024;
export const ARTIFACT_LIST_MAX = 100;

export function artifactPort(context: ToolContext): ArtifactPort {
  const port = context.ports.artifacts;
  if (!port) throw new ToolError('ARTIFACTS_UNAVAILABLE', 'artifacts are not available here');
  return port;
}

/**
 * Accepts a path or this tenant's `artifact://<tenant>/<path>` reference (agentd's
 * artifact_read argument). Another tenant's reference is "not found", never read.
 */
export function toArtifactPath(value: string, context: ToolContext): string {
  let path = value;
  if (value.startsWith('artifact://')) {
    const rest = value.slice('artifact://'.length);
    const slash = rest.indexOf('/');
    if (slash <= 0 || rest.slice(0, slash) !== context.tenant) {
      throw new ToolError('ARTIFACT_NOT_FOUND', `artifact ${value.slice(0, 200)} not found`);
    }
    path = rest.slice(slash + 1);
  }
  const problem = artifactPathProblem(path);
  if (problem) throw new ToolError('INVALID_PATH', `path ${problem}`);
  return path;
}

export function describeArtifact(stat: ArtifactStat, tenant: string): JsonObject {
  return {
    path: stat.path,
    ref: artifactRef(tenant, stat.path),
    content_type: stat.content_type,
    size_bytes: stat.size_bytes,
    sha256: stat.sha256,
    updated_at: stat.updated_at,
  };
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-ndjson|yaml|x-yaml|toml|csv|sql|graphql)\b|application\/[\w.+-]+\+(json|xml)\b)/i;

export function isTextContentType(contentType: string): boolean {
  return TEXT_TYPES.test(contentType.trim());
}

/** UTF-8 text without NUL bytes, or null when the bytes are not text. */
export function decodeText(body: Uint8Array): string | null {
  if (body.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return null;
  }
}
