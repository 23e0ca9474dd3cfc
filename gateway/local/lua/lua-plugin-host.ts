import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KONG_VERSION } from '../control-plane/kong-version.ts';
import type { Phase, PluginConfig, PluginDefinition, PluginEnvironment } from '../plugins/plugin.ts';
import type { RequestContext } from '../proxy/request-context.ts';
import { bridgeModuleSource, FS, luaLiteral, OPS, PHASE_CODE, PHASE_HEADERS, RS, SOURCE_CODE, type OpCode, type Read } from './bridge.ts';
import { fieldsFromLuaSchema } from './lua-schema.ts';
import type { LuaCall, LuaVm } from './vm/lua-vm.ts';
import { openLuaVm, type LuaVmChoice } from './vm/open-lua-vm.ts';

const LUA_DIR = fileURLToPath(new URL('./', import.meta.url));
const PDK_DIR = join(LUA_DIR, 'pdk');

/**
 * What the host reads and changes of a request: a narrow view of RequestContext, so the proxy's
 * request state can change shape without the Lua bridge following it.
 */
export type LuaRequest = Pick<
  RequestContext,
  | 'method' | 'path' | 'scheme' | 'host' | 'port' | 'clientIp' | 'route' | 'service' | 'source'
  | 'requestHeaders' | 'responseHeaders' | 'consumer' | 'credential' | 'inLastBodyChunk'
  | 'upstreamPath' | 'upstreamQuery' | 'status' | 'getRawBody' | 'setRawBody'
  | 'setServiceHeader' | 'addServiceHeader' | 'clearServiceHeader' | 'clearQueryArg'
  | 'setResponseHeader' | 'addResponseHeader' | 'clearResponseHeader' | 'exit' | 'errorResponse' | 'luaState'
>;

interface PhaseCall {
  request: LuaRequest;
  env: PluginEnvironment;
  body?: Buffer;
  pendingBody?: string;
}

/** The error a Lua handler raised (not kong.response.exit): Kong logs it and answers 500. */
export class LuaPluginError extends Error {}

/**
 * Runs custom Kong plugins (gateway/plugins/<name>/handler.lua + schema.lua, unchanged) in one
 * Lua VM (LuaJIT where its addon is built, else Lua 5.4 in WebAssembly) against the PDK in pdk/.
 * Each phase is one call into Lua; the changes it makes come back as one string (bridge.ts).
 */
export class LuaPluginHost {
  private current: PhaseCall | undefined;
  private readonly phaseFn: LuaCall;
  private readonly setConfigFn: LuaCall;
  private readonly releaseFn: LuaCall;
  private readonly registerFn: LuaCall;
  private readonly initWorkerFn: LuaCall;
  /** Plugin id -> the number the VM knows its config by. */
  private readonly configHandles = new Map<string, number>();
  private nextConfigHandle = 1;
  private nextSlot = 1;
  /** As Kong's Admin API reports it: "LuaJIT 2.1.0-beta3", or "Lua 5.4" on the fallback VM. */
  readonly luaVersion: string;

  private constructor(readonly vm: LuaVm) {
    this.phaseFn = vm.function('__kong_phase');
    this.setConfigFn = vm.function('__kong_set_config');
    this.releaseFn = vm.function('__kong_release');
    this.registerFn = vm.function('__kong_register');
    this.initWorkerFn = vm.function('__kong_init_worker');
    this.luaVersion = vm.function('__kong_lua_version')() as string;
  }

  static async create(options: { sharedDicts: readonly string[]; nodeId: string; vm?: LuaVmChoice }): Promise<LuaPluginHost> {
    const vm = await openLuaVm(options.vm);
    let host: LuaPluginHost | undefined;
    const call = () => {
      if (!host?.current) throw new Error('PDK function called outside of a plugin phase');
      return host.current;
    };
    vm.setFunction('__js_req', (what) => read(call(), what as Read, options.nodeId));
    vm.setFunction('__js_error_body', (status, message) => {
      const response = call().request.errorResponse(status as number, message as string | undefined);
      return `${String(response.headers!['Content-Type'])}${FS}${String(response.body)}`;
    });
    vm.setFunction('__js_set_body', (body) => {
      call().pendingBody = body as string;
      return undefined;
    });
    vm.setFunction('__js_log', (level, message) => {
      call().env.log(level === 'notice' ? 'info' : (level as 'debug' | 'info' | 'warn' | 'err'), message as string);
      return undefined;
    });
    vm.preload('pdk.bridge', '=pdk/bridge', bridgeModuleSource());
    vm.preload('pdk.config', '=pdk/config', `return ${luaLiteral({ kong_version: KONG_VERSION, shared_dicts: [...options.sharedDicts] })}\n`);
    vm.preload('cjson', '@json.lua', readFileSync(join(LUA_DIR, 'json.lua'), 'utf8'));
    for (const file of luaFiles(PDK_DIR)) {
      const path = relative(LUA_DIR, file).split(sep).join('/');
      vm.preload(path.replace(/\.lua$/, '').replaceAll('/', '.'), `@${path}`, readFileSync(file, 'utf8'));
    }
    vm.run('=pdk', 'require "pdk.runner"');
    host = new LuaPluginHost(vm);
    return host;
  }

  /** Loads gateway/plugins/<name>/{handler,schema}.lua as Kong would require them. */
  loadPlugin(pluginsDir: string, name: string): PluginDefinition {
    const dir = join(pluginsDir, name);
    let registered: { schema?: { name?: string; fields?: unknown }; priority: unknown; version: string; phases: string };
    try {
      for (const part of ['handler', 'schema']) {
        this.vm.preload(`kong.plugins.${name}.${part}`, `@${name}/${part}.lua`, readFileSync(join(dir, `${part}.lua`), 'utf8'));
      }
      registered = JSON.parse(this.registerFn(name) as string) as typeof registered;
    } catch (error) {
      throw new Error(`plugin ${name}: ${(error as Error).message}`);
    }
    if (typeof registered.priority !== 'number') throw new Error(`plugin ${name}: handler.lua has no numeric PRIORITY`);
    const schema = registered.schema ?? {};
    if (schema.name !== name) throw new Error(`plugin ${name}: schema.lua names itself '${String(schema.name)}'`);
    const { config, noConsumer, noRoute, noService } = fieldsFromLuaSchema(name, schema.fields);
    const phases = new Set(registered.phases.split(',').filter(Boolean));
    if (phases.has('init_worker')) this.initWorkerFn(name);

    const definition: PluginDefinition = {
      name,
      priority: registered.priority,
      version: registered.version,
      lua: true,
      noConsumer,
      noRoute,
      noService,
      configFields: config,
    };
    for (const phase of ['rewrite', 'access', 'header_filter', 'log'] as const) {
      if (phases.has(phase)) {
        definition[phase] = (ctx, conf, env) => this.runPhase(name, phase, ctx, conf, env);
      }
    }
    if (phases.has('body_filter')) {
      definition.body_filter = (ctx, conf, env, body) => this.runPhase(name, 'body_filter', ctx, conf, env, body);
    }
    return definition;
  }

  /** Hands a plugin instance's config to the VM once, so phases pass only a number. */
  setConfig(name: string, config: PluginConfig): void {
    const { __plugin_id, ...rest } = config;
    let handle = this.configHandles.get(__plugin_id);
    if (handle === undefined) {
      handle = this.nextConfigHandle++;
      this.configHandles.set(__plugin_id, handle);
    }
    this.setConfigFn(handle, name, JSON.stringify(rest, (_key, value: unknown) => (value === null ? undefined : value)));
  }

  /** Forgets configs no longer in the running configuration. */
  retainConfigs(ids: ReadonlySet<string>): void {
    for (const [id, handle] of this.configHandles) {
      if (!ids.has(id)) {
        this.setConfigFn(handle);
        this.configHandles.delete(id);
      }
    }
  }

  /** Drops the VM's per-request state (kong.ctx.*) unless its final phase call already did. */
  release(request: LuaRequest): void {
    const state = request.luaState;
    if (state && !state.released) this.releaseFn(state.slot);
    request.luaState = undefined;
  }

  /** The last Lua phase call the request will make: it releases the VM's state itself. */
  planFinalCall(request: LuaRequest, plugin: string, phase: Phase): void {
    this.stateOf(request).finalCall = { plugin, phase };
  }

  private stateOf(request: LuaRequest): LuaRequestState {
    // The VM's per-request state (kong.ctx.*) lives under a slot number this host hands out.
    request.luaState ??= { slot: this.nextSlot++, released: false };
    return request.luaState;
  }

  private runPhase(name: string, phase: Phase, request: LuaRequest, config: PluginConfig, env: PluginEnvironment, body?: Buffer): void {
    const handle = this.configHandles.get(config.__plugin_id);
    if (handle === undefined) throw new Error(`plugin ${name}: config ${config.__plugin_id} was never handed to the VM`);
    const state = this.stateOf(request);
    // body_filter runs once per chunk: only its last chunk can be the final call.
    const done = state.finalCall?.plugin === name && state.finalCall.phase === phase && (phase !== 'body_filter' || request.inLastBodyChunk);
    if (done) state.released = true;
    const side = PHASE_HEADERS[phase as keyof typeof PHASE_HEADERS];
    const headers = side === 'request' ? request.requestHeaders : side === 'response' ? request.responseHeaders : undefined;
    const call: PhaseCall = { request, env, body };
    this.current = call;
    let ops: string;
    try {
      const blob = headers && serializeHeaders(headers);
      const code = PHASE_CODE[phase];
      const source = SOURCE_CODE[request.source];
      ops = this.phaseFn(state.slot, handle, code, env.now(), request.status, source, done, blob) as string;
    } finally {
      this.current = undefined;
    }
    if (ops) apply(name, phase, call, ops);
  }
}

function read(call: PhaseCall, what: Read, nodeId: string): string | undefined {
  const { request } = call;
  switch (what) {
    case 'headers':
      return serializeHeaders(request.requestHeaders);
    case 'method':
      return request.method;
    case 'path':
      return request.path;
    case 'scheme':
      return request.scheme;
    case 'host':
      return request.host;
    case 'port':
      return String(request.port);
    case 'query':
      return request.upstreamQuery;
    case 'ip':
      return request.clientIp;
    case 'resp_headers':
      return serializeHeaders(request.responseHeaders);
    case 'body':
      return call.request.getRawBody()?.toString('utf8');
    case 'route':
      return request.route ? request.route.id + FS + (request.route.name ?? '') : undefined;
    case 'service':
      return request.service ? request.service.id + FS + (request.service.name ?? '') : undefined;
    case 'node_id':
      return nodeId;
    case 'consumer': {
      const { consumer, credential } = request;
      if (!consumer && !credential) return undefined;
      return [consumer?.id ?? '', consumer?.username ?? '', consumer?.custom_id ?? '', credential?.id ?? '', credential?.consumer.id ?? ''].join(FS);
    }
    default:
      throw new Error(`unknown PDK read: ${String(what satisfies never)}`);
  }
}

/** Applies a phase's ops (bridge.ts) to the request, in order. */
function apply(name: string, phase: Phase, call: PhaseCall, encoded: string): void {
  const { request } = call;
  let exit: { status: number; headers: Record<string, string | string[]> } | undefined;
  // Each op is three fields, read in place: String.split would build an array of all of them first.
  for (let at = 0; at < encoded.length; ) {
    const opEnd = encoded.indexOf(FS, at);
    const aEnd = encoded.indexOf(FS, opEnd + 1);
    const bEnd = encoded.indexOf(FS, aEnd + 1);
    const op = encoded.slice(at, opEnd) as OpCode;
    const a = encoded.slice(opEnd + 1, aEnd);
    const b = bEnd === -1 ? encoded.slice(aEnd + 1) : encoded.slice(aEnd + 1, bEnd);
    at = bEnd === -1 ? encoded.length : bEnd + 1;
    switch (op) {
      case OPS.set_service_header:
        request.setServiceHeader(a, b);
        break;
      case OPS.add_service_header:
        request.addServiceHeader(a, b);
        break;
      case OPS.clear_service_header:
        request.clearServiceHeader(a);
        break;
      case OPS.set_service_path:
        request.upstreamPath = a;
        break;
      case OPS.set_service_query:
        request.upstreamQuery = a;
        break;
      case OPS.clear_service_query_arg:
        request.clearQueryArg(a);
        break;
      case OPS.set_response_header:
        request.setResponseHeader(a, b);
        break;
      case OPS.add_response_header:
        request.addResponseHeader(a, b);
        break;
      case OPS.clear_response_header:
        request.clearResponseHeader(a);
        break;
      case OPS.set_status:
        request.status = Number(a);
        break;
      case OPS.exit:
        exit = { status: Number(a), headers: {} };
        break;
      case OPS.exit_header: {
        if (!exit) throw new Error(`plugin ${name}: ${OPS.exit_header} op before ${OPS.exit}`);
        const existing = exit.headers[a];
        exit.headers[a] = existing === undefined ? b : [...(Array.isArray(existing) ? existing : [existing]), b];
        break;
      }
      case OPS.replace_body:
        request.setRawBody(call.pendingBody ?? '');
        break;
      case OPS.fail:
        throw new LuaPluginError(`plugin ${name} failed in ${phase}: ${a}`);
      default:
        throw new Error(`plugin ${name}: unknown op '${String(op satisfies never)}' from the VM`);
    }
  }
  if (exit) request.exit(exit.status, call.pendingBody, exit.headers);
}

/** Headers as the PDK's blob: RS name FS value RS name FS value ... RS (names lower case). */
function serializeHeaders(headers: Map<string, string | string[]>): string {
  let blob = RS;
  for (const [name, value] of headers) {
    if (Array.isArray(value)) for (const v of value) blob += name + FS + v + RS;
    else blob += name + FS + value + RS;
  }
  return blob;
}

/** Every .lua file under dir. */
function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.lua'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** What the host keeps per request (RequestContext.luaState): the VM's slot and what it was told. */
export interface LuaRequestState {
  slot: number;
  /** The VM's per-request state is gone (the final phase call released it). */
  released: boolean;
  finalCall?: { plugin: string; phase: Phase };
}
