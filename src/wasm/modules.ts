// Compiled modules by the SHA-256 of their bytes: compiled once per process (at PUT, or at
// the first call in a process that did not see the PUT) and posted to every pool worker,
// which shares the compiled code. Bounded; the oldest entry goes first.

import type { WasmToolStore } from '../store/store.ts';

const DEFAULT_MAX_MODULES = 256;

export interface CompiledModules {
  remember(sha256: string, module: WebAssembly.Module): void;
  /** The tool's module at `sha256`; null when the tool is gone or was replaced meanwhile. */
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
      // Checked at PUT: compiling the stored bytes again cannot fail unless V8 changed.
      const module = await WebAssembly.compile(tool.module);
      remember(sha256, module);
      return module;
    },
  };
}
