/** What crosses between TypeScript and Lua: Lua's nil, booleans, numbers and strings. */
export type LuaScalar = string | number | boolean | undefined;

/** A global Lua function, called with scalars; returns its first result. Throws the Lua error. */
export type LuaCall = (...args: LuaScalar[]) => LuaScalar;

/**
 * One Lua VM as the plugin host uses it. Two implementations: LuaJIT through the native addon
 * (luajit-vm.ts) and Lua 5.4 in WebAssembly (wasmoon-vm.ts). They differ only in how they reach
 * the C API; the bridge above them (lua-plugin-host.ts, bridge.ts, pdk/*.lua) is the same code.
 */
export interface LuaVm {
  /** 'luajit' or 'wasmoon' */
  readonly kind: LuaVmKind;
  /** What runs, for the start banner, e.g. "LuaJIT 2.1.0-beta3 (native addon)". */
  readonly description: string;
  /** Runs a chunk; chunkName as Lua's load takes it ("@file.lua" or "=name"). */
  run(chunkName: string, source: string): void;
  /** package.preload[module] = the compiled chunk: `require(module)` runs it once. */
  preload(module: string, chunkName: string, source: string): void;
  /** A global Lua function that calls fn; an exception fn throws becomes a Lua error. */
  setFunction(name: string, fn: (...args: LuaScalar[]) => LuaScalar): void;
  /** The global function `name` (looked up once). */
  function(name: string): LuaCall;
  close(): void;
}

export type LuaVmKind = 'luajit' | 'wasmoon';

/** Memory one VM may hold: beyond it an allocation fails as a Lua error ("not enough memory"). */
export const DEFAULT_LUA_MEMORY_LIMIT = 256 * 1024 * 1024;
