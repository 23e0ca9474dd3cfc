import { LuaFactory, type LuaEngine } from 'wasmoon';
import type { LuaCall, LuaScalar, LuaVm } from './lua-vm.ts';

/** The parts of wasmoon's Emscripten module used here: Lua 5.4's C API, unwrapped. */
interface LuaModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  HEAPF64: Float64Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  _lua_getglobal(L: number, name: number): number;
  _lua_getfield(L: number, index: number, name: number): number;
  _lua_setfield(L: number, index: number, name: number): void;
  _lua_pushnumber(L: number, value: number): void;
  _lua_pushboolean(L: number, value: number): void;
  _lua_pushnil(L: number): void;
  _lua_pushlstring(L: number, string: number, length: number): number;
  _luaL_loadbufferx(L: number, buffer: number, length: number, name: number, mode: number): number;
  _lua_pcallk(L: number, nargs: number, nresults: number, errfunc: number, ctx: number, k: number): number;
  _lua_type(L: number, index: number): number;
  _lua_toboolean(L: number, index: number): number;
  _lua_tonumberx(L: number, index: number, isnum: number): number;
  _lua_tolstring(L: number, index: number, length: number): number;
  _lua_settop(L: number, index: number): void;
}

const LUA_TBOOLEAN = 1;
const LUA_TNUMBER = 3;
const LUA_TSTRING = 4;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Lua 5.4 in WebAssembly (wasmoon): the fallback where the LuaJIT addon was not built. Calls go
 * through Lua's C API directly; wasmoon's own call path (cwrap, per-character UTF-8 conversion
 * in JS) costs ~3 µs per call against ~0.3 µs here. Host functions use wasmoon's wrapping.
 */
export class WasmoonVm implements LuaVm {
  readonly kind = 'wasmoon';
  readonly description = 'Lua 5.4 in WebAssembly (wasmoon)';
  private readonly L: number;
  private readonly module: LuaModule;
  private readonly lengthPointer: number;
  private capacity = 0;
  private buffer = 0;

  private constructor(private readonly engine: LuaEngine) {
    this.L = engine.global.address;
    this.module = (engine.global.lua as unknown as { module: LuaModule }).module;
    this.lengthPointer = this.module._malloc(4);
  }

  static async open(memoryLimit: number): Promise<WasmoonVm> {
    const engine = await new LuaFactory().createEngine({
      enableProxy: false,
      injectObjects: false,
      openStandardLibs: true,
      traceAllocations: true,
    });
    engine.global.setMemoryMax(memoryLimit);
    return new WasmoonVm(engine);
  }

  run(chunkName: string, source: string): void {
    this.load(chunkName, source);
    this.pcall(0, 0);
  }

  preload(module: string, chunkName: string, source: string): void {
    const { L } = this;
    this.withCString('package', (name) => this.module._lua_getglobal(L, name));
    this.withCString('preload', (name) => this.module._lua_getfield(L, -1, name));
    try {
      this.load(chunkName, source);
    } catch (error) {
      this.module._lua_settop(L, -3);
      throw error;
    }
    this.withCString(module, (name) => this.module._lua_setfield(L, -2, name));
    this.module._lua_settop(L, -3);
  }

  setFunction(name: string, fn: (...args: LuaScalar[]) => LuaScalar): void {
    // wasmoon cannot hand Lua a null: undefined is nil.
    this.engine.global.set(name, (...args: unknown[]) => fn(...(args.map((a) => (a === null ? undefined : a)) as LuaScalar[])));
  }

  function(name: string): LuaCall {
    const nameBytes = encoder.encode(`${name}\0`);
    const namePointer = this.module._malloc(nameBytes.length);
    this.module.HEAPU8.set(nameBytes, namePointer);
    return (...args) => {
      const { module, L } = this;
      module._lua_getglobal(L, namePointer);
      for (const arg of args) this.push(arg);
      this.pcall(args.length, 1);
      const result = this.read(-1);
      module._lua_settop(L, -2);
      return result;
    };
  }

  close(): void {
    this.engine.global.close();
  }

  private push(value: LuaScalar): void {
    const { module, L } = this;
    switch (typeof value) {
      case 'number':
        module._lua_pushnumber(L, value);
        break;
      case 'string':
        this.pushString(value);
        break;
      case 'boolean':
        module._lua_pushboolean(L, value ? 1 : 0);
        break;
      default:
        module._lua_pushnil(L);
    }
  }

  private read(index: number): LuaScalar {
    const { module, L } = this;
    switch (module._lua_type(L, index)) {
      case LUA_TNUMBER:
        return module._lua_tonumberx(L, index, 0);
      case LUA_TSTRING:
        return this.readString(index);
      case LUA_TBOOLEAN:
        return module._lua_toboolean(L, index) !== 0;
      default:
        return undefined;
    }
  }

  private readString(index: number): string {
    const { module } = this;
    const pointer = module._lua_tolstring(this.L, index, this.lengthPointer);
    // The heap views are replaced when the VM's memory grows: read them after the call.
    return pointer === 0 ? '' : decoder.decode(module.HEAPU8.subarray(pointer, pointer + module.HEAPU32[this.lengthPointer >> 2]!));
  }

  /** Calls the function below nargs arguments; on error, pops the message and throws it. */
  private pcall(nargs: number, nresults: number): void {
    if (this.module._lua_pcallk(this.L, nargs, nresults, 0, 0, 0) !== 0) this.throwTop();
  }

  private load(chunkName: string, source: string): void {
    const { module, L } = this;
    const bytes = encoder.encode(source);
    const pointer = module._malloc(bytes.length);
    module.HEAPU8.set(bytes, pointer);
    const status = this.withCString(chunkName, (name) => module._luaL_loadbufferx(L, pointer, bytes.length, name, 0));
    module._free(pointer);
    if (status !== 0) this.throwTop();
  }

  private throwTop(): never {
    const message = this.readString(-1);
    this.module._lua_settop(this.L, -2);
    throw new Error(message);
  }

  private withCString<T>(value: string, use: (pointer: number) => T): T {
    const bytes = encoder.encode(`${value}\0`);
    const pointer = this.module._malloc(bytes.length);
    this.module.HEAPU8.set(bytes, pointer);
    try {
      return use(pointer);
    } finally {
      this.module._free(pointer);
    }
  }

  /** Lua copies the bytes: one scratch buffer serves every string. */
  private pushString(value: string): void {
    const { module } = this;
    // UTF-8 needs at most 3 bytes per UTF-16 code unit.
    if (value.length * 3 > this.capacity) {
      if (this.buffer) module._free(this.buffer);
      this.capacity = Math.max(4096, value.length * 3);
      this.buffer = module._malloc(this.capacity);
    }
    const { written } = encoder.encodeInto(value, module.HEAPU8.subarray(this.buffer, this.buffer + this.capacity));
    module._lua_pushlstring(this.L, this.buffer, written);
  }
}
