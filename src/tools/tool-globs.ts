// Globs over tool names (`require_approval`, docs/approvals.md): checked at agent PUT
// (known-names.ts) and matched by the run's approval gate (src/runtime/approvals.ts).

/**
 * `*` any run of characters, `?` exactly one; everything else literal. Tool names are
 * `[A-Za-z0-9._:-]`, so two wildcards are all a pattern needs (no classes, no braces).
 */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('')
    .map((char) =>
      char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\-]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${body}$`);
}

/**
 * Tool name prefixes of families a tenant fills later (its MCP servers `mcp_<server>_…`,
 * its WebAssembly tools `wasm_…`): a pattern inside them is accepted at PUT even when no
 * such tool exists yet.
 */
export const TENANT_FAMILY_PREFIXES = ['mcp_', 'wasm_'] as const;

/**
 * The `require_approval` entries that name nothing: they match no tool that exists and
 * do not lie inside a tenant family. An empty list means the agent document is valid.
 */
export function unknownApprovalPatterns(
  patterns: readonly string[],
  toolNames: readonly string[],
): string[] {
  return patterns.filter((pattern) => {
    if (TENANT_FAMILY_PREFIXES.some((prefix) => pattern.startsWith(prefix))) return false;
    const regexp = globToRegExp(pattern);
    return !toolNames.some((name) => regexp.test(name));
  });
}
