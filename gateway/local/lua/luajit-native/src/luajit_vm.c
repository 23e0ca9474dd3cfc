// The local gateway's Lua VM on LuaJIT, for Node through N-API (ABI-stable: one build serves
// Node 20 and 24). Deliberately small: the bridge itself (ops, phases, the PDK) lives in Lua and
// TypeScript and is shared with the WebAssembly VM; this file only moves scalars across.
//
//   open(memoryLimitBytes)                  -> vm (an external)
//   run(vm, chunkName, source)              runs a chunk; throws its error
//   preload(vm, module, chunkName, source)  package.preload[module] = the compiled chunk
//   setFunction(vm, name, fn)               a global Lua function that calls fn
//   ref(vm, globalName)                     -> a handle on a global function, for call
//   call(vm, handle, ...args)               -> the function's first result; throws its error
//   memoryUsed(vm)                          -> bytes the VM holds
//   close(vm)
//
// Values crossing either way are nil/undefined, booleans, numbers and strings (UTF-8; Lua strings
// are bytes and go to JS as UTF-8). A JS exception inside a function set with setFunction becomes
// a Lua error with the exception's message.
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <node_api.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <luajit.h>

#define MAX_ARGS 16
#define MAX_FUNCTIONS 16

typedef struct {
  lua_State *L;
  lua_Alloc base_alloc;  // LuaJIT's own allocator, which vm_alloc wraps
  void *base_ud;
  size_t used;
  size_t limit;
  bool refused;  // an allocation was refused since the last call from JS ended
  napi_env env;  // the env of the JS call in progress, for callbacks from Lua
  napi_ref functions[MAX_FUNCTIONS];
  int function_count;
  char *scratch;  // strings from JS are copied here before Lua copies them again
  size_t scratch_size;
} Vm;

#define NAPI_CALL(env, call)                                            \
  do {                                                                  \
    if ((call) != napi_ok) {                                            \
      const napi_extended_error_info *info;                             \
      napi_get_last_error_info((env), &info);                           \
      bool pending;                                                     \
      napi_is_exception_pending((env), &pending);                       \
      if (!pending) napi_throw_error((env), NULL, info->error_message); \
      return NULL;                                                      \
    }                                                                   \
  } while (0)

// LuaJIT's own allocator, within the limit: beyond it Lua raises "not enough memory" in the
// running call. LuaJIT (unlike Lua 5.4) does not collect and retry when an allocation fails, so
// the garbage of the call that hit the limit is collected when that call returns (after_call). The state is created with the default allocator (it is faster than malloc, and
// on x64 it also places memory where the GC can address it) and then wrapped.
static void *vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  Vm *vm = ud;
  size_t old = ptr ? osize : 0;
  if (nsize > old && vm->used - old + nsize > vm->limit) {
    vm->refused = true;
    return NULL;
  }
  void *result = vm->base_alloc(vm->base_ud, ptr, osize, nsize);
  if (result || nsize == 0) vm->used = vm->used - old + nsize;
  return result;
}

static void vm_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  Vm *vm = data;
  if (vm->L) lua_close(vm->L);
  for (int i = 0; i < vm->function_count; i++) napi_delete_reference(env, vm->functions[i]);
  free(vm->scratch);
  free(vm);
}

static Vm *get_vm(napi_env env, napi_value value) {
  void *data = NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok || !data || !((Vm *)data)->L) {
    napi_throw_error(env, NULL, "not an open LuaJIT VM");
    return NULL;
  }
  Vm *vm = data;
  vm->env = env;
  return vm;
}

static bool grow_scratch(napi_env env, Vm *vm, size_t size) {
  if (size < 4096) size = 4096;
  char *grown = realloc(vm->scratch, size);
  if (!grown) {
    napi_throw_error(env, NULL, "out of memory");
    return false;
  }
  vm->scratch = grown;
  vm->scratch_size = size;
  return true;
}

// A JS string as UTF-8 in the VM's scratch buffer; NULL with an exception pending on failure.
// One copy when it fits (the usual case); a copy that came within a character (4 bytes) of the
// end may have been cut short (N-API writes whole characters only),
// so then the length is asked for and the copy made again.
static const char *js_string(napi_env env, Vm *vm, napi_value value, size_t *length) {
  if (!vm->scratch && !grow_scratch(env, vm, 4096)) return NULL;
  if (napi_get_value_string_utf8(env, value, vm->scratch, vm->scratch_size, length) != napi_ok) return NULL;
  if (*length + 4 < vm->scratch_size) return vm->scratch;  // room for any further character: complete
  size_t needed;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &needed) != napi_ok) return NULL;
  if (needed + 1 > vm->scratch_size && !grow_scratch(env, vm, needed + 1)) return NULL;
  if (napi_get_value_string_utf8(env, value, vm->scratch, vm->scratch_size, length) != napi_ok) return NULL;
  return vm->scratch;
}

// Pushes a JS scalar onto the Lua stack; false (exception pending) for other types.
static bool push_js(napi_env env, Vm *vm, napi_value value) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok) return false;
  switch (type) {
    case napi_undefined:
    case napi_null:
      lua_pushnil(vm->L);
      return true;
    case napi_boolean: {
      bool b;
      napi_get_value_bool(env, value, &b);
      lua_pushboolean(vm->L, b);
      return true;
    }
    case napi_number: {
      double d;
      napi_get_value_double(env, value, &d);
      lua_pushnumber(vm->L, d);
      return true;
    }
    case napi_string: {
      size_t length;
      const char *s = js_string(env, vm, value, &length);
      if (!s) return false;
      lua_pushlstring(vm->L, s, length);
      return true;
    }
    default:
      napi_throw_type_error(env, NULL, "only nil, booleans, numbers and strings cross into Lua");
      return false;
  }
}

// The Lua value at index as a JS value (tables and functions have no JS form: undefined).
static napi_value to_js(napi_env env, lua_State *L, int index) {
  napi_value result = NULL;
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      napi_get_boolean(env, lua_toboolean(L, index), &result);
      break;
    case LUA_TNUMBER:
      napi_create_double(env, lua_tonumber(L, index), &result);
      break;
    case LUA_TSTRING: {
      size_t length;
      const char *s = lua_tolstring(L, index, &length);
      napi_create_string_utf8(env, s, length, &result);
      break;
    }
    default:
      napi_get_undefined(env, &result);
  }
  return result;
}

// Throws the Lua error on top of the stack (its message as is) and pops it.
static napi_value throw_lua_error(napi_env env, Vm *vm) {
  const char *message = lua_tostring(vm->L, -1);
  napi_throw_error(env, NULL, message ? message : "(error object is not a string)");
  lua_pop(vm->L, 1);
  return NULL;
}

// Calls the JS function in upvalue 1 (an index into vm->functions) with the Lua arguments.
static int call_js(lua_State *L) {
  Vm *vm = lua_touserdata(L, lua_upvalueindex(1));
  int index = (int)lua_tointeger(L, lua_upvalueindex(2));
  napi_env env = vm->env;
  int argc = lua_gettop(L);
  if (argc > MAX_ARGS) return luaL_error(L, "too many arguments for a host function");
  napi_value argv[MAX_ARGS], fn, receiver, result;
  for (int i = 0; i < argc; i++) argv[i] = to_js(env, L, i + 1);
  napi_get_reference_value(env, vm->functions[index], &fn);
  napi_get_undefined(env, &receiver);
  if (napi_call_function(env, receiver, fn, (size_t)argc, argv, &result) != napi_ok) {
    napi_value exception, message;
    const char *text = "host function failed";
    size_t length = strlen(text);
    if (napi_get_and_clear_last_exception(env, &exception) == napi_ok &&
        napi_coerce_to_string(env, exception, &message) == napi_ok) {
      const char *s = js_string(env, vm, message, &length);
      if (s) text = s;
      else napi_get_and_clear_last_exception(env, &exception);
    }
    lua_pushlstring(L, text, length);
    return lua_error(L);
  }
  if (!push_js(env, vm, result)) {
    napi_value exception;
    napi_get_and_clear_last_exception(env, &exception);
    return luaL_error(L, "a host function returned a value Lua cannot take");
  }
  return 1;
}

static napi_value vm_open(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  double limit;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  NAPI_CALL(env, napi_get_value_double(env, argv[0], &limit));
  Vm *vm = calloc(1, sizeof(Vm));
  if (!vm) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  vm->limit = (size_t)limit;
  vm->L = luaL_newstate();
  if (!vm->L) {
    free(vm);
    napi_throw_error(env, NULL, "LuaJIT could not create a state");
    return NULL;
  }
  vm->base_alloc = lua_getallocf(vm->L, &vm->base_ud);
  lua_gc(vm->L, LUA_GCCOLLECT, 0);
  vm->used = (size_t)lua_gc(vm->L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(vm->L, LUA_GCCOUNTB, 0);
  lua_setallocf(vm->L, vm_alloc, vm);
  luaL_openlibs(vm->L);
  NAPI_CALL(env, napi_create_external(env, vm, vm_finalize, NULL, &result));
  return result;
}

static napi_value vm_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Vm *vm = get_vm(env, argv[0]);
  if (!vm) return NULL;
  lua_close(vm->L);
  vm->L = NULL;
  return NULL;
}

// After a call from JS: if the limit was hit, the memory the failed work held is garbage now;
// collect it at once, or the next calls would fail until the incremental GC caught up.
static void after_call(Vm *vm) {
  if (!vm->refused) return;
  vm->refused = false;
  lua_gc(vm->L, LUA_GCCOLLECT, 0);
}

static napi_value vm_run(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Vm *vm = get_vm(env, argv[0]);
  if (!vm) return NULL;
  if (!push_js(env, vm, argv[1])) return NULL;
  size_t length;
  const char *source = js_string(env, vm, argv[2], &length);
  if (!source) return NULL;
  int status = luaL_loadbuffer(vm->L, source, length, lua_tostring(vm->L, -1));
  lua_remove(vm->L, -2);
  if (status != 0) return throw_lua_error(env, vm);
  if (lua_pcall(vm->L, 0, 0, 0) != 0) throw_lua_error(env, vm);
  after_call(vm);
  return NULL;
}

static napi_value vm_preload(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Vm *vm = get_vm(env, argv[0]);
  if (!vm) return NULL;
  lua_State *L = vm->L;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  if (!push_js(env, vm, argv[1]) || !push_js(env, vm, argv[2])) {
    lua_settop(L, 0);
    return NULL;
  }
  size_t length;
  const char *source = js_string(env, vm, argv[3], &length);
  if (!source) {
    lua_settop(L, 0);
    return NULL;
  }
  int status = luaL_loadbuffer(L, source, length, lua_tostring(L, -1));
  lua_remove(L, -2);  // the chunk name
  if (status != 0) {
    napi_value result = throw_lua_error(env, vm);
    lua_settop(L, 0);
    return result;
  }
  lua_settable(L, -3);  // preload[module] = chunk
  lua_settop(L, 0);
  return NULL;
}

static napi_value vm_set_function(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Vm *vm = get_vm(env, argv[0]);
  if (!vm) return NULL;
  if (vm->function_count == MAX_FUNCTIONS) {
    napi_throw_error(env, NULL, "too many host functions");
    return NULL;
  }
  NAPI_CALL(env, napi_create_reference(env, argv[2], 1, &vm->functions[vm->function_count]));
  lua_pushlightuserdata(vm->L, vm);
  lua_pushinteger(vm->L, vm->function_count++);
  lua_pushcclosure(vm->L, call_js, 2);
  size_t length;
  const char *name = js_string(env, vm, argv[1], &length);
  if (!name) {
    lua_pop(vm->L, 1);
    return NULL;
  }
  lua_setglobal(vm->L, name);
  return NULL;
}

static napi_value vm_ref(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Vm *vm = get_vm(env, argv[0]);
  if (!vm) return NULL;
  size_t length;
  const char *name = js_string(env, vm, argv[1], &length);
  if (!name) return NULL;
  lua_getglobal(vm->L, name);
  if (!lua_isfunction(vm->L, -1)) {
    lua_pop(vm->L, 1);
    napi_throw_error(env, NULL, "no such Lua function");
    return NULL;
  }
  NAPI_CALL(env, napi_create_int32(env, luaL_ref(vm->L, LUA_REGISTRYINDEX), &result));
  return result;
}

static napi_value vm_call(napi_env env, napi_callback_info info) {
  size_t argc = MAX_ARGS + 2;
  napi_value argv[MAX_ARGS + 2];
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 2 || argc > MAX_ARGS + 2) {
    napi_throw_error(env, NULL, "call(vm, handle, ...args): at most 16 arguments");
    return NULL;
  }
  Vm *vm = get_vm(env, argv[0]);
  if (!vm) return NULL;
  lua_State *L = vm->L;
  int32_t handle;
  NAPI_CALL(env, napi_get_value_int32(env, argv[1], &handle));
  int base = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, handle);
  for (size_t i = 2; i < argc; i++) {
    if (!push_js(env, vm, argv[i])) {
      lua_settop(L, base);
      return NULL;
    }
  }
  if (lua_pcall(L, (int)argc - 2, 1, 0) != 0) {
    throw_lua_error(env, vm);
    after_call(vm);
    return NULL;
  }
  napi_value result = to_js(env, L, -1);
  lua_settop(L, base);
  after_call(vm);
  return result;
}

static napi_value vm_memory_used(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Vm *vm = get_vm(env, argv[0]);
  if (!vm) return NULL;
  NAPI_CALL(env, napi_create_double(env, (double)vm->used, &result));
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
    {"open", NULL, vm_open, NULL, NULL, NULL, napi_enumerable, NULL},
    {"close", NULL, vm_close, NULL, NULL, NULL, napi_enumerable, NULL},
    {"run", NULL, vm_run, NULL, NULL, NULL, napi_enumerable, NULL},
    {"preload", NULL, vm_preload, NULL, NULL, NULL, napi_enumerable, NULL},
    {"setFunction", NULL, vm_set_function, NULL, NULL, NULL, napi_enumerable, NULL},
    {"ref", NULL, vm_ref, NULL, NULL, NULL, napi_enumerable, NULL},
    {"call", NULL, vm_call, NULL, NULL, NULL, napi_enumerable, NULL},
    {"memoryUsed", NULL, vm_memory_used, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_value version;
  if (napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties) != napi_ok) return NULL;
  if (napi_create_string_utf8(env, LUAJIT_VERSION, NAPI_AUTO_LENGTH, &version) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "version", version);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
