/**
 * The part of the WebAssembly JS API dpkit uses. TypeScript ships these
 * types only with the DOM library and @types/node 20 has none; this keeps
 * DOM's globals out of a Node project.
 */
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
    grow(delta: number): number;
  }
  class Module {
    constructor(bytes: BufferSource);
  }
  class Global {
    value: number;
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  type BufferSource = ArrayBufferView | ArrayBuffer;
}
