import { createRequire } from 'node:module';
import type { LuaCall, LuaScalar, LuaVm } from './lua-vm.ts';

/** The native addon's exports (gateway/local/lua/luajit-native/src/luajit_vm.c). */
interface LuaJitAddon {
  version: string;
  open(memoryLimit: number): LuaJitState;
  close(vm: LuaJitState): void;
  run(vm: LuaJitState, chunkName: string, source: string): void;
  preload(vm: LuaJitState, module: string, chunkName: string, source: string): void;
  setFunction(vm: LuaJitState, name: string, fn: (...args: LuaScalar[]) => LuaScalar): void;
  ref(vm: LuaJitState, name: string): number;
  call(vm: LuaJitState, handle: number, ...args: LuaScalar[]): LuaScalar;
}
declare const state: unique symbol;
type LuaJitState = { readonly [state]: true };

/** The package that builds the addon: an optional dependency, built where LuaJIT's headers are. */
export const LUAJIT_ADDON_PACKAGE = 'animal-store-luajit';
/** The system packages it needs (Debian: OpenResty's LuaJIT 2.1 branch). */
export const LUAJIT_SYSTEM_PACKAGES = 'libluajit2-5.1-dev luajit2';

/** The addon, or why it cannot be loaded. */
export function loadLuaJitAddon(): LuaJitAddon | Error {
  try {
    return createRequire(import.meta.url)(LUAJIT_ADDON_PACKAGE) as LuaJitAddon;
  } catch (error) {
    return error as Error;
  }
}

/** OpenResty's LuaJIT 2.1 (Debian's libluajit2-5.1), the VM family Kong runs, in process. */
export class LuaJitVm implements LuaVm {
  readonly kind = 'luajit';
  readonly description: string;
  private readonly vm: LuaJitState;

  constructor(
    private readonly addon: LuaJitAddon,
    memoryLimit: number,
  ) {
    this.vm = addon.open(memoryLimit);
    this.description = `${addon.version} (native addon)`;
  }

  run(chunkName: string, source: string): void {
    this.addon.run(this.vm, chunkName, source);
  }

  preload(module: string, chunkName: string, source: string): void {
    this.addon.preload(this.vm, module, chunkName, source);
  }

  setFunction(name: string, fn: (...args: LuaScalar[]) => LuaScalar): void {
    this.addon.setFunction(this.vm, name, fn);
  }

  function(name: string): LuaCall {
    const handle = this.addon.ref(this.vm, name);
    // Bound rather than wrapped: no rest-arguments array per call.
    return this.addon.call.bind(undefined, this.vm, handle);
  }

  close(): void {
    this.addon.close(this.vm);
  }
}
