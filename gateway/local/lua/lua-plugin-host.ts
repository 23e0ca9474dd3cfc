import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LuaFactory, type LuaEngine } from 'wasmoon';
import type { FieldSchema } from '../config/field-schema.ts';
import { KONG_VERSION } from '../kong/version.ts';
import type { RequestContext } from '../proxy/request-context.ts';
import type { Phase, PluginConfig, PluginDefinition, PluginEnvironment } from '../plugins/plugin.ts';
import { LuaPhaseCall, type ConsumerFields } from './lua-phase-call.ts';
import { fieldsFromLuaSchema } from './lua-schema.ts';

const FS = '\x1f';
const RS = '\x1e';
const PRELUDE_DIR = new URL('./', import.meta.url);

type LuaFunction = (...args: unknown[]) => unknown;

interface PhaseCall {
  ctx: RequestContext;
  env: PluginEnvironment;
  body?: Buffer;
  pendingBody?: string;
}

/** The error a Lua handler raised (not kong.response.exit): Kong logs it and answers 500. */
export class LuaPluginError extends Error {}

/**
 * Runs custom Kong plugins (gateway/plugins/<name>/handler.lua + schema.lua, unchanged) in one
 * Lua 5.4 VM (wasmoon) against the PDK subset in pdk.lua. Each phase is one call into Lua; the
 * changes it makes come back as one string (see pdk.lua for the format).
 */
export class LuaPluginHost {
  private current: PhaseCall | undefined;
  private readonly phaseCall: LuaPhaseCall;
  private readonly setConfigFn: LuaFunction;
  private readonly releaseFn: LuaFunction;
  private readonly registerFn: LuaFunction;
  private readonly initWorkerFn: LuaFunction;
  /** Plugin id -> the number the VM knows its config by. */
  private readonly configHandles = new Map<string, number>();
  private nextConfigHandle = 1;
  private nextSlot = 1;
  /** The VM's per-request state (kong.ctx.*) lives under a slot number this host hands out. */
  private readonly requests = new WeakMap<RequestContext, LuaRequestState>();

  private constructor(engine: LuaEngine) {
    this.phaseCall = new LuaPhaseCall(engine, '__kong_phase');
    this.setConfigFn = engine.global.get('__kong_set_config') as LuaFunction;
    this.releaseFn = engine.global.get('__kong_release') as LuaFunction;
    this.registerFn = engine.global.get('__kong_register') as LuaFunction;
    this.initWorkerFn = engine.global.get('__kong_init_worker') as LuaFunction;
  }

  static async create(options: { sharedDicts: readonly string[]; nodeId: string }): Promise<LuaPluginHost> {
    const engine = await new LuaFactory().createEngine({ enableProxy: false, injectObjects: false, openStandardLibs: true });
    let host: LuaPluginHost | undefined;
    const call = () => {
      if (!host?.current) throw new Error('PDK function called outside of a plugin phase');
      return host.current;
    };
    // wasmoon cannot return null to Lua: every function below returns a string or undefined.
    engine.global.set('__js_req', (what: string) => host!.read(call(), what, options.nodeId));
    engine.global.set('__js_error_body', (status: number, message?: string) => {
      const response = call().ctx.errorResponse(status, message ?? undefined);
      return `${String(response.headers!['Content-Type'])}${FS}${String(response.body)}`;
    });
    engine.global.set('__js_set_body', (body: string) => {
      call().pendingBody = body;
    });
    engine.global.set('__js_log', (level: string, message: string) => {
      const env = call().env;
      env.log(level === 'notice' ? 'info' : (level as 'debug' | 'info' | 'warn' | 'err'), message);
    });
    engine.global.set('__kong_version', KONG_VERSION);
    engine.global.set('__shared_dicts', [...options.sharedDicts]);
    await engine.doString(`package.loaded["cjson"] = (function() ${readFileSync(new URL('json.lua', PRELUDE_DIR), 'utf8')} end)()`);
    await engine.doString(readFileSync(new URL('pdk.lua', PRELUDE_DIR), 'utf8'));
    host = new LuaPluginHost(engine);
    return host;
  }

  /** Loads gateway/plugins/<name>/{handler,schema}.lua as Kong would require them. */
  loadPlugin(pluginsDir: string, name: string): PluginDefinition {
    const dir = join(pluginsDir, name);
    const handlerSource = readFileSync(join(dir, 'handler.lua'), 'utf8');
    const schemaSource = readFileSync(join(dir, 'schema.lua'), 'utf8');
    let registered: { schema: string; priority: unknown; version: string; phases: string };
    try {
      registered = this.registerFn(name, handlerSource, schemaSource) as typeof registered;
    } catch (error) {
      throw new Error(`plugin ${name}: ${(error as Error).message}`);
    }
    if (typeof registered.priority !== 'number') throw new Error(`plugin ${name}: handler.lua has no numeric PRIORITY`);
    const schema = JSON.parse(registered.schema) as { name?: string; fields?: unknown };
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
      configFields: config as FieldSchema['fields'],
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
    this.setConfigFn(handle, name, JSON.stringify(rest, (_key, value) => (value === null ? undefined : value)));
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
  release(ctx: RequestContext): void {
    const state = this.requests.get(ctx);
    if (state && !state.released) this.releaseFn(state.slot);
    this.requests.delete(ctx);
  }

  /** The last Lua phase call the request will make: it releases the VM's state itself. */
  planFinalCall(ctx: RequestContext, plugin: string, phase: Phase): void {
    this.stateOf(ctx).finalCall = { plugin, phase };
  }

  private stateOf(ctx: RequestContext): LuaRequestState {
    let state = this.requests.get(ctx);
    if (!state) {
      state = { slot: this.nextSlot++, released: false };
      this.requests.set(ctx, state);
    }
    return state;
  }

  private runPhase(name: string, phase: Phase, ctx: RequestContext, config: PluginConfig, env: PluginEnvironment, body?: Buffer): void {
    const handle = this.configHandles.get(config.__plugin_id);
    if (handle === undefined) throw new Error(`plugin ${name}: config ${config.__plugin_id} was never handed to the VM`);
    const state = this.stateOf(ctx);
    // body_filter runs once per chunk: only its last chunk can be the final call.
    const done = state.finalCall?.plugin === name && state.finalCall.phase === phase && (phase !== 'body_filter' || ctx.inLastBodyChunk);
    if (done) state.released = true;
    // Request headers for the phases that mostly read them, response headers for header_filter.
    const headers = phase === 'header_filter' ? ctx.responseHeaders : phase === 'access' || phase === 'rewrite' ? ctx.requestHeaders : undefined;
    let consumer: ConsumerFields | undefined;
    if (state.consumer !== ctx.consumer || state.credential !== ctx.credential) {
      state.consumer = ctx.consumer;
      state.credential = ctx.credential;
      const { consumer: c, credential } = ctx;
      consumer = [c?.id ?? '', c?.username ?? '', c?.custom_id ?? '', credential?.id ?? '', credential?.consumer.id ?? ''];
    }
    const call: PhaseCall = { ctx, env, body };
    this.current = call;
    let ops: string;
    try {
      ops = this.phaseCall.call(
        state.slot, handle, PHASE_CODES[phase], env.now(), ctx.status, SOURCE_CODES[ctx.source], done,
        headers && serializeHeaders(headers), consumer,
      );
    } finally {
      this.current = undefined;
    }
    if (ops) this.apply(name, phase, call, ops);
  }

  private read(call: PhaseCall, what: string, nodeId: string): string | undefined {
    const { ctx } = call;
    switch (what) {
      case 'headers':
        return serializeHeaders(ctx.requestHeaders);
      case 'method':
        return ctx.method;
      case 'path':
        return ctx.path;
      case 'scheme':
        return ctx.scheme;
      case 'host':
        return ctx.host;
      case 'port':
        return String(ctx.port);
      case 'query':
        return ctx.upstreamQuery;
      case 'ip':
        return ctx.clientIp;
      case 'resp_headers':
        return serializeHeaders(ctx.responseHeaders);
      case 'body':
        return ctx.getRawBody()?.toString('utf8');
      case 'route':
        return ctx.route ? [ctx.route.id, ctx.route.name ?? ''].join(FS) : undefined;
      case 'service':
        return ctx.service ? [ctx.service.id, ctx.service.name ?? ''].join(FS) : undefined;
      case 'node_id':
        return nodeId;
      default:
        throw new Error(`unknown PDK read: ${what}`);
    }
  }

  private apply(name: string, phase: Phase, call: PhaseCall, encoded: string): void {
    const { ctx } = call;
    let exit: { status: number; headers: Record<string, string | string[]> } | undefined;
    const fields = encoded.split(FS);
    for (let i = 0; i + 2 < fields.length; i += 3) {
      const op = fields[i];
      const a = fields[i + 1]!;
      const b = fields[i + 2]!;
      switch (op) {
        case 'sh':
          ctx.setServiceHeader(a, b);
          break;
        case 'ah':
          ctx.addServiceHeader(a, b);
          break;
        case 'ch':
          ctx.clearServiceHeader(a);
          break;
        case 'sp':
          ctx.upstreamPath = a;
          break;
        case 'sq':
          ctx.upstreamQuery = a;
          break;
        case 'cq':
          ctx.clearQueryArg(a);
          break;
        case 'rsh':
          ctx.setResponseHeader(a, b);
          break;
        case 'rah':
          ctx.addResponseHeader(a, b);
          break;
        case 'rch':
          ctx.clearResponseHeader(a);
          break;
        case 'st':
          ctx.status = Number(a);
          break;
        case 'exit':
          exit = { status: Number(a), headers: {} };
          break;
        case 'xh': {
          const existing = exit!.headers[a];
          exit!.headers[a] = existing === undefined ? b : [...(Array.isArray(existing) ? existing : [existing]), b];
          break;
        }
        case 'body':
          ctx.setRawBody(call.pendingBody ?? '');
          break;
        case 'fail':
          throw new LuaPluginError(`plugin ${name} failed in ${phase}: ${a}`);
      }
    }
    if (exit) ctx.exit(exit.status, call.pendingBody, exit.headers);
  }
}

interface LuaRequestState {
  slot: number;
  /** The VM's per-request state is gone (the final phase call released it). */
  released: boolean;
  /** What the VM was last told kong.client.get_consumer/get_credential answer. */
  consumer?: RequestContext['consumer'];
  credential?: RequestContext['credential'];
  finalCall?: { plugin: string; phase: Phase };
}

const PHASE_CODES: Record<Phase, number> = { rewrite: 1, access: 2, header_filter: 3, body_filter: 4, log: 5 };
const SOURCE_CODES = { service: 1, exit: 2, error: 3 } as const;

/** Headers as pdk.lua's blob: RS name FS value RS name FS value ... RS (names lower case). */
function serializeHeaders(headers: Map<string, string | string[]>): string {
  let blob = RS;
  for (const [name, value] of headers) {
    if (Array.isArray(value)) for (const v of value) blob += name + FS + v + RS;
    else blob += name + FS + value + RS;
  }
  return blob;
}
