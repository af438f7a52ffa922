// The part of the WebAssembly JS API keel uses. tsconfig's lib is ES2023 without DOM
// and @types/node 20 does not declare the global, so it is declared here.

declare namespace WebAssembly {
  type ImportExportKind = 'function' | 'table' | 'memory' | 'global' | 'tag';
  interface ModuleImportDescriptor {
    module: string;
    name: string;
    kind: ImportExportKind;
  }
  interface ModuleExportDescriptor {
    name: string;
    kind: ImportExportKind;
  }
  class Module {
    constructor(bytes: Uint8Array);
    static imports(module: Module): ModuleImportDescriptor[];
    static exports(module: Module): ModuleExportDescriptor[];
  }
  class Memory {
    readonly buffer: ArrayBuffer;
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  function compile(bytes: Uint8Array): Promise<Module>;
  function validate(bytes: Uint8Array): boolean;
}
