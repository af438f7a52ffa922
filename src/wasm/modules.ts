// Compiled modules by the SHA-256 of their bytes: compiled once per process (at PUT, or at
// the first call in a process that did not see the PUT) and posted to every pool worker,
// which shares the compiled code. Bounded; the oldest entry goes first. Stored bytes are
// checked and capped again before they are compiled (module-check.ts): a module stored
// before a cap existed, or by any path other than the PUT, still runs within the limits.

import type { WasmToolStore } from '../store/store.ts';
import type { WasmManifest } from './manifest.ts';
import { prepareModule } from './module-check.ts';

const DEFAULT_MAX_MODULES = 256;

export interface CompiledModules {
  remember(sha256: string, module: WebAssembly.Module): void;
  /**
   * The tool's module at `sha256`, capped; null when the tool is gone or was replaced
   * meanwhile. Throws WASM_MODULE_INVALID when the stored bytes fail the PUT's check.
   */
  load(tenant: string, name: string, sha256: string): Promise<WebAssembly.Module | null>;
}

export function createCompiledModules(
  store: Pick<WasmToolStore, 'getWasmTool'>,
  max = DEFAULT_MAX_MODULES,
): CompiledModules {
  const modules = new Map<string, WebAssembly.Module>();
  const remember = (sha256: string, module: WebAssembly.Module) => {
    modules.delete(sha256);
    modules.set(sha256, module);
    if (modules.size > max) modules.delete(modules.keys().next().value as string);
  };
  return {
    remember,
    async load(tenant, name, sha256) {
      const cached = modules.get(sha256);
      if (cached) return cached;
      const tool = await store.getWasmTool(tenant, name);
      if (!tool || tool.sha256 !== sha256) return null;
      // The PUT's check again: the same bytes for a module it rewrote, the caps for one
      // stored without them.
      const manifest = tool.manifest as unknown as WasmManifest;
      const { module } = await prepareModule(tool.module, manifest.memory_limit_mb);
      remember(sha256, module);
      return module;
    },
  };
}
