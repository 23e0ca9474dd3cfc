import { LuaJitVm, LUAJIT_ADDON_PACKAGE, LUAJIT_SYSTEM_PACKAGES, loadLuaJitAddon } from './luajit-vm.ts';
import { DEFAULT_LUA_MEMORY_LIMIT, type LuaVm, type LuaVmKind } from './lua-vm.ts';
import { WasmoonVm } from './wasmoon-vm.ts';

export interface LuaVmChoice {
  /** Which VM; by default LuaJIT where the addon loads, else wasmoon. */
  kind?: LuaVmKind;
  memoryLimit?: number;
}

/** Why LuaJIT is not running, and what would make it run; undefined when it is. */
export function luaJitUnavailable(): string | undefined {
  const addon = loadLuaJitAddon();
  if (!(addon instanceof Error)) return undefined;
  return `the optional package ${LUAJIT_ADDON_PACKAGE} is not built (${addon.message.split('\n')[0]}); `
    + `install ${LUAJIT_SYSTEM_PACKAGES} (Debian) and run npm ci to build it`;
}

export async function openLuaVm(choice: LuaVmChoice = {}): Promise<LuaVm> {
  const memoryLimit = choice.memoryLimit ?? DEFAULT_LUA_MEMORY_LIMIT;
  if (choice.kind === 'wasmoon') return WasmoonVm.open(memoryLimit);
  const addon = loadLuaJitAddon();
  if (!(addon instanceof Error)) return new LuaJitVm(addon, memoryLimit);
  if (choice.kind === 'luajit') throw new Error(`LuaJIT was asked for, but ${luaJitUnavailable()}`);
  return WasmoonVm.open(memoryLimit);
}
