// The names an agent document may use, and which of its names are not among them: tool
// families, tool names, and the provider part of `model`. `PUT T/agents/:agent` refuses
// an unknown name with a 400 that names it and lists what exists (docs/http-api.md, The
// agent document); anything matching tool names against patterns reuses `knownNamesFor`.

import { KeelError } from '../errors.ts';
import { MCP_FAMILY, mcpToolName } from '../mcp/names.ts';
import type { McpServerStore } from '../store/store.ts';
import type { AgentSpec } from '../types.ts';
import type { ToolRegistry } from './registry.ts';
import { unknownApprovalPatterns } from './tool-globs.ts';

/**
 * Families whose tools a tenant registers at run time (MCP servers, WebAssembly tools):
 * always valid names, even before the tenant has registered any such tool.
 */
export const TENANT_TOOL_FAMILIES: readonly string[] = [MCP_FAMILY, 'wasm'];

/** The provider every keel has (src/providers/registry.ts). */
export const ALWAYS_PRESENT_PROVIDER = 'fixture';

export interface KnownNames {
  families: string[];
  /** Exact tool names: the built-ins and every discovered tool of the tenant. */
  tools: string[];
  /**
   * `mcp_<server>_` for each MCP server the tenant registered: a name under one of these
   * is accepted even when discovery has not (yet) listed it, because a server that is
   * down at PUT time must not make its agents unwritable.
   */
  toolPrefixes: string[];
  providers: string[];
}

export interface KnownNamesDeps {
  /** The tenant's tools (built-ins + discovered); or only the process's built-ins. */
  tools: (tenant: string) => Promise<ToolRegistry>;
  mcpServers?: Pick<McpServerStore, 'listMcpServers'>;
  /** Provider names a model may start with (`fixture` is added). */
  providers: readonly string[];
}

export type KnownNamesFor = (tenant: string) => Promise<KnownNames>;

const sorted = (names: Iterable<string>): string[] => [...new Set(names)].sort();

export function createKnownNames(deps: KnownNamesDeps): KnownNamesFor {
  const providers = sorted([ALWAYS_PRESENT_PROVIDER, ...deps.providers]);
  return async (tenant) => {
    const [registry, servers] = await Promise.all([
      deps.tools(tenant),
      deps.mcpServers ? deps.mcpServers.listMcpServers(tenant) : Promise.resolve([]),
    ]);
    const tools = registry.all();
    return {
      families: sorted([...tools.map((tool) => tool.family), ...TENANT_TOOL_FAMILIES]),
      tools: sorted(tools.map((tool) => tool.name)),
      // mcpToolName cleans the server name exactly as the tool names are made.
      toolPrefixes: sorted(servers.map((server) => mcpToolName(server.name, ''))),
      providers,
    };
  };
}

export interface UnknownName {
  /** e.g. `body.allowed_families[1]`. */
  field: string;
  value: string;
  what: 'family' | 'tool' | 'provider' | 'tool pattern';
}

export function isKnownTool(name: string, known: KnownNames): boolean {
  return known.tools.includes(name) || known.toolPrefixes.some((p) => name.startsWith(p));
}

/** The names of an agent document that exist nowhere, in document order. */
export function unknownAgentNames(
  spec: Pick<AgentSpec, 'model' | 'allowed_families' | 'allowed_tools' | 'require_approval'>,
  known: KnownNames,
): UnknownName[] {
  const unknown: UnknownName[] = [];
  const provider = spec.model.slice(0, spec.model.indexOf('/'));
  if (!known.providers.includes(provider)) {
    unknown.push({ field: 'body.model', value: provider, what: 'provider' });
  }
  spec.allowed_families?.forEach((family, index) => {
    if (!known.families.includes(family)) {
      unknown.push({ field: `body.allowed_families[${index}]`, value: family, what: 'family' });
    }
  });
  spec.allowed_tools?.forEach((tool, index) => {
    if (!isKnownTool(tool, known)) {
      unknown.push({ field: `body.allowed_tools[${index}]`, value: tool, what: 'tool' });
    }
  });
  const patterns = spec.require_approval ?? [];
  const unknownPatterns = new Set(unknownApprovalPatterns(patterns, known.tools));
  patterns.forEach((pattern, index) => {
    if (unknownPatterns.has(pattern)) {
      unknown.push({
        field: `body.require_approval[${index}]`,
        value: pattern,
        what: 'tool pattern',
      });
    }
  });
  return unknown;
}

const MAX_LISTED = 40;

function listed(names: readonly string[]): string {
  const shown = names.slice(0, MAX_LISTED).join(', ');
  return names.length > MAX_LISTED ? `${shown}, … (${names.length} in all)` : shown;
}

/** One sentence per unknown name: what it is, and what exists instead. */
export function describeUnknownNames(unknown: readonly UnknownName[], known: KnownNames): string {
  return unknown
    .map((name) => {
      switch (name.what) {
        case 'provider':
          return `${name.field}: unknown provider "${name.value}" (configured: ${listed(known.providers)}; add [providers.${name.value}] to keel.toml)`;
        case 'family':
          return `${name.field}: unknown tool family "${name.value}" (families: ${listed(known.families)})`;
        case 'tool pattern':
          return `${name.field}: "${name.value}" matches no tool (tools: ${listed(known.tools)}; patterns under mcp_* and wasm_* are accepted before their tools exist)`;
        case 'tool': {
          const prefixes = known.toolPrefixes.length
            ? `; or any name under ${known.toolPrefixes.map((p) => `${p}*`).join(', ')}`
            : '';
          return `${name.field}: unknown tool "${name.value}" (tools: ${listed(known.tools)}${prefixes})`;
        }
      }
    })
    .join('; ');
}

/** Throws VALIDATION_FAILED naming every unknown name of `spec` and what exists. */
export async function assertAgentNamesKnown(
  knownNamesFor: KnownNamesFor,
  tenant: string,
  spec: Pick<AgentSpec, 'model' | 'allowed_families' | 'allowed_tools' | 'require_approval'>,
): Promise<void> {
  const known = await knownNamesFor(tenant);
  const unknown = unknownAgentNames(spec, known);
  if (unknown.length === 0) return;
  throw new KeelError('VALIDATION_FAILED', describeUnknownNames(unknown, known), {
    fields: unknown.map((entry) => entry.field),
  });
}
