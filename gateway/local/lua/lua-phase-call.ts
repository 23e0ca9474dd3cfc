import type { LuaEngine } from 'wasmoon';

/** The parts of wasmoon's Emscripten module a phase call uses: Lua's C API, unwrapped. */
interface LuaModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  _lua_getglobal(L: number, name: number): number;
  _lua_pushnumber(L: number, value: number): void;
  _lua_pushnil(L: number): void;
  _lua_pushlstring(L: number, string: number, length: number): number;
  _lua_pcallk(L: number, nargs: number, nresults: number, errfunc: number, ctx: number, k: number): number;
  _lua_tolstring(L: number, index: number, length: number): number;
  _lua_settop(L: number, index: number): void;
}

/** What identifies the consumer and credential to the VM; sent only when they change. */
export type ConsumerFields = readonly [consumerId: string, username: string, customId: string, credentialId: string, credentialConsumerId: string];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Calls pdk.lua's __kong_phase through Lua's C API directly: numbers pushed as numbers, strings
 * copied into the VM's memory with TextEncoder, the result read back with TextDecoder. wasmoon's
 * own call path (cwrap, per-character UTF-8 conversion in JS) costs ~3 µs per call against
 * ~0.3 µs here, and packing every field into one string cost the VM a pattern match per phase.
 */
export class LuaPhaseCall {
  private readonly L: number;
  private readonly module: LuaModule;
  private readonly namePointer: number;
  private readonly lengthPointer: number;
  private capacity = 0;
  private buffer = 0;

  constructor(engine: LuaEngine, functionName: string) {
    this.L = engine.global.address;
    this.module = (engine.global.lua as unknown as { module: LuaModule }).module;
    const nameBytes = encoder.encode(`${functionName}\0`);
    this.namePointer = this.module._malloc(nameBytes.length);
    this.module.HEAPU8.set(nameBytes, this.namePointer);
    this.lengthPointer = this.module._malloc(4);
  }

  /**
   * __kong_phase(slot, config, phase, now, status, source, done, headers, [consumer fields...]):
   * returns the ops string, or throws the Lua error.
   */
  call(
    slot: number,
    config: number,
    phase: number,
    now: number,
    status: number,
    source: number,
    done: boolean,
    headers: string | undefined,
    consumer: ConsumerFields | undefined,
  ): string {
    const { module, L } = this;
    module._lua_getglobal(L, this.namePointer);
    module._lua_pushnumber(L, slot);
    module._lua_pushnumber(L, config);
    module._lua_pushnumber(L, phase);
    module._lua_pushnumber(L, now);
    module._lua_pushnumber(L, status);
    module._lua_pushnumber(L, source);
    module._lua_pushnumber(L, done ? 1 : 0);
    if (headers === undefined) module._lua_pushnil(L);
    else this.pushString(headers);
    let nargs = 8;
    if (consumer) {
      for (const field of consumer) this.pushString(field);
      nargs += consumer.length;
    }
    const callStatus = module._lua_pcallk(L, nargs, 1, 0, 0, 0);
    const pointer = module._lua_tolstring(L, -1, this.lengthPointer);
    // The heap views are replaced when the VM's memory grows: read them after the call.
    const result = pointer === 0 ? '' : decoder.decode(module.HEAPU8.subarray(pointer, pointer + module.HEAPU32[this.lengthPointer >> 2]!));
    module._lua_settop(L, -2);
    if (callStatus !== 0) throw new Error(`__kong_phase: ${result}`);
    return result;
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
