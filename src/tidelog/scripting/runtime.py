"""One Lua 5.1 interpreter (lupa) with Redis's sandbox and type conversions.

:class:`LuaRuntime` holds the interpreter.  What a script sees is Redis's:

* the libraries Redis loads (base, table, string, math, and the extra ones
  of :data:`LIBRARY_INSTALLERS`), without ``io``, ``require``, ``loadfile``,
  ``dofile``, ``print``, ``module``, ``package``, ``debug``, ``getfenv``,
  ``setfenv``, ``newproxy``; ``os`` holds only ``os.clock`` (Redis 8);
* a read-only global table: assigning a global fails with ``Attempt to
  modify a readonly table``, reading a missing one with ``Script attempted
  to access nonexistent global variable 'x'``; the library tables are
  read-only too (proxies: ``getmetatable`` and ``setmetatable`` show and
  refuse what Redis's read-only tables would);
* the ``redis`` table (``call``, ``pcall``, ``error_reply`` ...), ``KEYS``
  and ``ARGV``.  The Python callables behind ``redis.*`` are wrapped in
  Lua functions, which hand a call with more arguments than lupa's C entry
  point has stack for (about 8,000) over in one table; so that a tail call
  into one of our Lua functions keeps the script's frame (whose line errors
  name, as with Redis's C functions), scripts are compiled with their tail
  calls made plain calls (:mod:`.tailcalls`).

Conversions (Redis's rules, both ways):

* a command's reply to Lua (:meth:`LuaRuntime.to_lua`), depending on the
  script's ``redis.setresp``: RESP2 integers, bulk strings, arrays, nil as
  ``false``, status as ``{ok=...}``, errors as ``{err=...}``; RESP3 adds
  ``nil``, booleans, ``{map=...}``, ``{set=...}``, ``{double=...}``,
  ``{verbatim_string=...}``;
* a script's value to a reply (:meth:`LuaRuntime.to_reply`): numbers
  truncated to integers, arrays stopping at the first nil, ``{ok=...}``,
  ``{err=...}``, booleans (``1`` / null while the script speaks RESP2, true
  booleans after ``setresp(3)``), and the RESP3 tables (``{big_number=...}``
  as the client's protocol has it: a big number, or a bulk string in RESP2).

Error statistics: a command's error is counted where it arose; the error
table the script sees carries ``ignore_error_stats_update`` (as in Redis) so
that passing it on, by raising or returning it, does not count it again.

Commands run through ``executor(argv, raise_errors)``, given by the owner
(the scripts manager): the runtime only knows Lua.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import lupa.lua51 as lua51

from .. import REDIS_VERSION, errors
from ..commands import table
from ..resp.doubles import format_double
from ..resp.replies import (
    NULL_ARRAY,
    DoubleText,
    ErrorReply,
    Map,
    RawReply,
    SetReply,
    SimpleString,
    Verbatim,
)
from . import lualibs
from .tailcalls import without_tail_calls

# The libraries Redis compiles into its Lua (cjson, cmsgpack, bit, struct:
# :mod:`.lualibs`), each an ``install(lua_runtime)`` that sets one global
# table.  The runtime calls each once, before the sandbox closes, and makes
# the tables of LIBRARY_NAMES read-only like the standard ones.
LIBRARY_INSTALLERS: list[Callable[[Any], None]] = list(lualibs.INSTALLERS)
LIBRARY_NAMES = ("cjson", "cmsgpack", "bit", "struct")


# Redis's numbers for redis.log levels and redis.set_repl flags.
LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE, LOG_WARNING = 0, 1, 2, 3
REPL_NONE, REPL_AOF, REPL_REPLICA, REPL_ALL = 0, 1, 2, 3

# How many Lua instructions run between two checks of the kill flag.
HOOK_COUNT = 100_000
# How deep a script's reply may nest tables: Redis stops where Lua's C stack
# (8,000 slots) runs out, 7,995 levels of a table holding itself; the
# conversion takes one Python frame per level, so the interpreter's recursion
# limit is raised to leave room for it (LuaRuntime.__init__).
LUA_REPLY_DEPTH = 7995

_INT64 = 2 ** 63

# The chunk name of our own Lua code: frames from it are skipped when an
# error's position is looked up.
_INTERNAL = "=tidelog"

_BOOTSTRAP = r"""
local py_call, py_pcall, py_check, py_log, py_setresp, py_sha1, py_set_repl, py_errmsg,
      version, version_num, py_acl_check, py_spread, py_without_tail_calls = ...
local G = _G
local raw_pcall, raw_error, raw_type, raw_rawset, raw_rawget = pcall, error, type, rawset, rawget
local raw_tostring, raw_select, raw_unpack, raw_setmetatable = tostring, select, unpack, setmetatable
local getinfo, sethook, debug_getmetatable = debug.getinfo, debug.sethook, debug.getmetatable
local os_clock = os.clock
local setfenv_, loadstring_, raw_xpcall, pairs, ipairs = setfenv, loadstring, xpcall, pairs, ipairs


local readonly = raw_setmetatable({}, {__mode = 'k'})
local function readonly_error() raw_error('Attempt to modify a readonly table', 2) end
local proxied = raw_setmetatable({}, {__mode = 'k'})  -- read-only proxy -> its table
local function protect(t)
  local proxy = raw_setmetatable({}, {__index = t, __newindex = readonly_error, __metatable = false})
  readonly[proxy] = true
  proxied[proxy] = t
  return proxy
end

-- The Python callables as Lua functions.  lupa calls a Python object with
-- its arguments on Lua's stack and needs two slots more below Lua 5.1's
-- limit of 8,000 (lua_checkstack): with more arguments than that (a script's
-- redis.call('rpush', k, unpack(t)) with #t near 8,000, which Redis takes) it
-- fails.  Such calls hand their arguments over in one table.  The wrapper is
-- our own chunk's frame, skipped when an error's line is looked up, and calls
-- the Python side in the ordinary way (a C function in tail position is not
-- a tail call in Lua 5.1), so errors still name the script's line.
local SPREAD_FROM = 7900
local function lua_function(f)
  return function(...)
    local n = raw_select('#', ...)
    if n < SPREAD_FROM then return f(...) end
    return py_spread(f, {...}, n)
  end
end
py_call, py_pcall, py_log, py_setresp, py_sha1, py_set_repl, py_acl_check =
  lua_function(py_call), lua_function(py_pcall), lua_function(py_log), lua_function(py_setresp),
  lua_function(py_sha1), lua_function(py_set_repl), lua_function(py_acl_check)

-- Library functions Redis has in C and we have in Lua check their arguments
-- themselves, so that an error names the script's line and the function as
-- Lua's C library would ("bad argument #1 to 'rawset' (table expected, got
-- nil)"): arg_error is called by such a function, level 3 being its caller.
-- The name is the one the caller used ('?' when called from C, as through
-- pcall), as luaL_argerror finds it.
local function arg_error(n, msg)
  local info = getinfo(2, 'n')
  local name = info and info.name or '?'
  raw_error('bad argument #' .. n .. " to '" .. name .. "' (" .. msg .. ')', 3)
end
local function got(nargs, n, v)  -- what luaL_typename says of argument n
  if n > nargs then return 'no value' end
  return raw_type(v)
end
-- Is f a function of Lua's own (not one of the library's, C or ours)?
local function lua_function_value(f)
  if raw_type(f) ~= 'function' then return false end
  local info = getinfo(f, 'S')
  return info.what ~= 'C' and info.source ~= '=tidelog'
end

local killed = false  -- the count hook stopped the script: pcall cannot catch that
local redis = {}
redis.call = py_call
redis.pcall = py_pcall
-- error_reply as Redis forms it: '-CODE message' or 'message' (code ERR);
-- the code is what comes before the first space, and CR/LF at either end
-- of the message go.
redis.error_reply = function(...)
  local msg = ...
  if raw_select('#', ...) ~= 1 or raw_type(msg) ~= 'string' then
    return {err = 'ERR wrong number or type of arguments'}
  end
  if msg:sub(1, 1) == '-' then msg = msg:sub(2) end
  local code, text = 'ERR', msg
  local space = msg:find(' ', 1, true)
  if space then code, text = msg:sub(1, space - 1), msg:sub(space + 1) end
  text = (text:gsub('^[\r\n]+', ''))
  text = (text:gsub('[\r\n]+$', ''))
  return {err = code .. ' ' .. text}
end
redis.status_reply = function(...)
  local msg = ...
  if raw_select('#', ...) ~= 1 or raw_type(msg) ~= 'string' then
    return {err = 'ERR wrong number or type of arguments'}
  end
  return {ok = msg}
end
redis.sha1hex = py_sha1
redis.acl_check_cmd = py_acl_check
redis.log = py_log
redis.setresp = py_setresp
redis.set_repl = py_set_repl
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = version, version_num
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3

pcall = function(f, ...)
  local r = {n = 0}
  local function pack(...) r = {n = raw_select('#', ...), ...} end
  pack(raw_pcall(f, ...))
  if not r[1] then
    if killed then raw_error(r[2], 0) end
    local e = r[2]
    if raw_type(e) == 'userdata' then
      local m = py_errmsg(e)
      if m then r[2] = m end
    elseif raw_type(e) == 'table' then  -- an error table gives its message, as in Redis
      local m = e.err
      local t = raw_type(m)
      if t == 'string' or t == 'number' then r[2] = m end
    elseif raw_type(e) == 'string' then
      -- pcall(error, msg, 2) positions msg at this function, where Redis's
      -- pcall (C) has the script that called it
      local at, rest = e:find('^tidelog:%d+: ')
      if at then
        local info = getinfo(2, 'Sl')
        rest = e:sub(rest + 1)
        if info and info.currentline > 0 then
          rest = info.short_src .. ':' .. info.currentline .. ': ' .. rest
        end
        r[2] = rest
      end
    end
  end
  return raw_unpack(r, 1, r.n)
end
xpcall = function(...)
  local f, h = ...
  if raw_select('#', ...) < 2 then arg_error(2, 'value expected') end
  return raw_xpcall(f, function(e)
    if raw_type(e) == 'userdata' then
      local m, counted = py_errmsg(e)
      if m then e = {err = m, ignore_error_stats_update = counted} end
    end
    return h(e)
  end)
end
-- rawget, next, pairs and ipairs see through the read-only proxies to the
-- tables behind them (Redis's read-only tables are the tables themselves).
rawget = function(...)
  local t, k = ...
  local n = raw_select('#', ...)
  if raw_type(t) ~= 'table' then arg_error(1, 'table expected, got ' .. got(n, 1, t)) end
  if n < 2 then arg_error(2, 'value expected') end
  return raw_rawget(proxied[t] or t, k)
end
rawset = function(...)
  local t, k, v = ...
  local n = raw_select('#', ...)
  if raw_type(t) ~= 'table' then arg_error(1, 'table expected, got ' .. got(n, 1, t)) end
  if n < 2 then arg_error(2, 'value expected') end
  if n < 3 then arg_error(3, 'value expected') end
  if readonly[t] then raw_error('Attempt to modify a readonly table', 0) end
  return raw_rawset(t, k, v)
end

-- The count hook: every so many instructions, ask whether to stop.
local function hook()
  local why = py_check()
  if why then
    killed = true
    raw_error({err = why})
  end
end

-- Where an error happened: the first frame of the script's own code.
local function handler(err)
  local level, info = 2, nil
  while true do
    info = getinfo(level, 'Sl')
    if not info or (info.what ~= 'C' and info.source ~= '=tidelog') then break end
    level = level + 1
  end
  if raw_type(err) == 'userdata' then
    local m, counted = py_errmsg(err)
    if m then err = {err = m, ignore_error_stats_update = counted} end
  end
  if raw_type(err) ~= 'table' then err = {err = 'ERR ' .. raw_tostring(err)} end
  if info then err.source = info.source; err.line = info.currentline end
  return err
end

-- The sandbox: what Redis removes, gone; what stays, read-only.
for _, name in ipairs({'io', 'require', 'loadfile', 'dofile', 'print', 'module', 'package',
                           'debug', 'getfenv', 'setfenv', 'newproxy', 'python', 'os'}) do
  G[name] = nil
end
-- Coroutines run under the count hook too (Lua 5.1 keeps a hook function
-- per thread, so a new coroutine would otherwise run unchecked).
local raw_create, raw_resume = coroutine.create, coroutine.resume
local function create_hooked(f)
  local co = raw_create(f)
  sethook(co, hook, '', HOOK_COUNT)
  return co
end
coroutine.create = function(f)
  if not lua_function_value(f) then arg_error(1, 'Lua function expected') end
  return create_hooked(f)
end
coroutine.resume = function(co, ...)
  if raw_type(co) ~= 'thread' then arg_error(1, 'coroutine expected') end
  local r = {n = 0}
  local function pack(...) r = {n = raw_select('#', ...), ...} end
  pack(raw_resume(co, ...))
  if not r[1] and killed then raw_error(r[2], 0) end  -- SCRIPT KILL is not caught
  return raw_unpack(r, 1, r.n)
end
coroutine.wrap = function(f)
  if not lua_function_value(f) then arg_error(1, 'Lua function expected') end
  local co = create_hooked(f)
  return function(...)
    local r = {n = 0}
    local function pack(...) r = {n = raw_select('#', ...), ...} end
    pack(raw_resume(co, ...))
    if not r[1] then raw_error(r[2], 0) end
    return raw_unpack(r, 2, r.n)
  end
end
G.os = {clock = os_clock}
G.redis = redis
local env_globals = {}
for k, v in pairs(G) do env_globals[k] = v end
for _, name in ipairs({'string', 'table', 'math', 'coroutine', 'redis', 'os',
                           'cjson', 'cmsgpack', 'bit', 'struct'}) do
  if raw_type(env_globals[name]) == 'table' then env_globals[name] = protect(env_globals[name]) end
end
-- Strings' methods come from the read-only string table; the strings'
-- metatable is seen read-only too.
local string_mt = getmetatable('')
string_mt.__index = env_globals.string
string_mt.__metatable = protect(string_mt)
-- pairs, ipairs and next see through the read-only proxies.
local raw_next, raw_ipairs = next, ipairs
env_globals.next = function(...)
  local t, k = ...
  if raw_type(t) ~= 'table' then
    arg_error(1, 'table expected, got ' .. got(raw_select('#', ...), 1, t))
  end
  return raw_next(proxied[t] or t, k)
end
env_globals.pairs = function(...)
  local t = ...
  if raw_type(t) ~= 'table' then
    arg_error(1, 'table expected, got ' .. got(raw_select('#', ...), 1, t))
  end
  return raw_next, proxied[t] or t, nil
end
env_globals.ipairs = function(...)
  local t = ...
  if raw_type(t) ~= 'table' then
    arg_error(1, 'table expected, got ' .. got(raw_select('#', ...), 1, t))
  end
  return raw_ipairs(proxied[t] or t)
end
-- unpack with Redis's fix of Lua 5.1's range overflow (unpack({}, -2,
-- 2147483647) crashed the interpreter): a range wider than the stack can
-- take is refused.  The arguments are checked here, with unpack's own
-- messages, so that an error points at the script's line.
do
  local unpack, floor, to_number = raw_unpack, math.floor, tonumber
  local function bad(n, expected, got, level)  -- level: the script's, seen from here
    local info = getinfo(level - 1, 'n')  -- unpack as its caller named it
    raw_error("bad argument #" .. n .. " to '" .. (info and info.name or '?') .. "' (" .. expected ..
              " expected, got " .. got .. ")", level)
  end
  local function int(x, n)
    local v = to_number(x)
    if v == nil then bad(n, 'number', raw_type(x), 4) end
    return v < 0 and -floor(-v) or floor(v)
  end
  env_globals.unpack = function(...)
    local t, i, j = ...
    if raw_type(t) ~= 'table' then
      bad(1, 'table', raw_select('#', ...) == 0 and 'no value' or raw_type(t), 3)
    end
    local first = i == nil and 1 or int(i, 2)
    local last = j == nil and #t or int(j, 3)
    if first > last then return end
    -- as lua_checkstack counts: the arguments plus the results, at most 8000
    local nargs = raw_select('#', ...)
    if last - first + 1 + nargs > 8000 then raw_error('too many results to unpack', 2) end
    if nargs == 1 then return unpack(t) end
    if nargs == 2 then return unpack(t, first) end
    return unpack(t, first, last)
  end
end
-- Code compiled at run time (loadstring, load) runs in the sandbox too, and
-- precompiled (binary) chunks are refused, as Redis refuses them.
local env
local raw_getmetatable, raw_concat = getmetatable, table.concat
-- A compiled chunk again, its tail calls made plain calls (see tailcalls.py):
-- our Lua-side library functions then never replace the script's frame.
local string_dump = string.dump
local function plain_calls(f, name)
  return loadstring_(py_without_tail_calls(string_dump(f)), name)
end
local function load_text(s, name)
  if raw_type(s) == 'string' and s:sub(1, 1) == '\27' then
    return nil, 'binary chunks are not allowed'
  end
  local f, e = loadstring_(s, name)
  if f then
    f = plain_calls(f, name)
    setfenv_(f, env)
  end
  return f, e
end
env_globals.loadstring = load_text
env_globals.load = function(...)
  local fn, name = ...
  if raw_type(fn) ~= 'function' then
    arg_error(1, 'function expected, got ' .. got(raw_select('#', ...), 1, fn))
  end
  local parts = {}
  while true do
    local piece = fn()
    if piece == nil or piece == '' then break end
    parts[#parts + 1] = piece
  end
  return load_text(raw_concat(parts), name or '=(load)')
end
-- Redis's read-only tables are plain tables with a read-only mark; ours are
-- proxies.  getmetatable shows what Redis's would have (the library tables
-- none, _G one whose __index refuses unknown names, itself read-only), and
-- setmetatable on a read-only table is refused with Redis's message.
local shown = raw_setmetatable({}, {__mode = 'k'})
env_globals.getmetatable = function(...)
  local o = ...
  if raw_select('#', ...) == 0 then arg_error(1, 'value expected') end
  local t = raw_type(o)
  if t == 'userdata' then return nil end  -- a Python object: nothing to see
  if t == 'table' and readonly[o] then return shown[o] end
  return raw_getmetatable(o)
end
env_globals.setmetatable = function(...)
  local t, mt = ...
  local n = raw_select('#', ...)
  if raw_type(t) ~= 'table' then
    arg_error(1, 'table expected, got ' .. got(n, 1, t))
  end
  if n < 2 or (mt ~= nil and raw_type(mt) ~= 'table') then
    arg_error(2, 'nil or table expected')
  end
  if readonly[t] then raw_error('Attempt to modify a readonly table', 0) end
  local old = debug_getmetatable(t)
  if old ~= nil and raw_rawget(old, '__metatable') ~= nil then
    raw_error('cannot change a protected metatable', 2)
  end
  return raw_setmetatable(t, mt)
end
local function missing_global(_, k)
  raw_error("Script attempted to access nonexistent global variable '" .. raw_tostring(k) .. "'", 2)
end
raw_setmetatable(env_globals, {__index = missing_global})
env = raw_setmetatable({}, {__index = env_globals, __newindex = readonly_error, __metatable = false})
readonly[env] = true
proxied[env] = env_globals
shown[env] = protect({__index = missing_global})
env_globals._G = env

-- compile(body, chunkname) -> function | nil, message
local function compile(body, name)
  if body:sub(1, 1) == '\27' then return nil, 'binary chunks are not allowed' end
  local f, msg = loadstring_(body, name)
  if not f then return nil, msg end
  f = plain_calls(f, name)
  setfenv_(f, env)
  return f
end

-- run(f, keys, argv) -> true, value | false, error table
local function run(f, keys, argv)
  env_globals.KEYS, env_globals.ARGV = keys, argv
  killed = false
  sethook(hook, '', HOOK_COUNT)
  local ok, v = raw_xpcall(f, handler)
  sethook()
  return ok, v
end

-- Functions (FUNCTION LOAD).  Library code runs with its own globals, where
-- `redis` holds only what loading may use (register_function, log, the
-- constants); the functions it registers see the whole `redis` once called.
local registered, loading = nil, false
local FLAGS = {['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true,
               ['no-cluster'] = true, ['allow-cross-slot-keys'] = true}
local function fail(msg) raw_error({err = msg}) end
local function register_function(...)
  if not loading then fail('ERR redis.register_function can only be called on FUNCTION LOAD command') end
  local n = raw_select('#', ...)
  local name, callback, flags, description
  if n == 1 and raw_type((...)) ~= 'table' then
    fail('ERR calling redis.register_function with a single argument is only applicable to ' ..
         'Lua table (representing named arguments).')
  end
  if n == 1 then
    for k, v in pairs((...)) do
      if k == 'function_name' then name = v
      elseif k == 'callback' then callback = v
      elseif k == 'flags' then flags = v
      elseif k == 'description' then description = v
      else fail('ERR unknown argument given to redis.register_function') end
    end
    if name == nil then fail('ERR redis.register_function must get a function name argument') end
    if callback == nil then fail('ERR redis.register_function must get a callback argument') end
    if raw_type(name) ~= 'string' and raw_type(name) ~= 'number' then
      fail('ERR function_name argument given to redis.register_function must be a string')
    end
    if raw_type(callback) ~= 'function' then
      fail('ERR callback argument given to redis.register_function must be a function')
    end
    if description ~= nil and raw_type(description) ~= 'string' then
      fail('ERR description argument given to redis.register_function must be a string')
    end
  elseif n == 2 then
    name, callback = ...
    if raw_type(name) ~= 'string' and raw_type(name) ~= 'number' then
      fail('ERR first argument to redis.register_function must be a string')
    end
    if raw_type(callback) ~= 'function' then
      fail('ERR second argument to redis.register_function must be a function')
    end
  else
    fail('ERR wrong number of arguments to redis.register_function')
  end
  local flag_list = {}
  if flags ~= nil then
    if raw_type(flags) ~= 'table' then
      fail('ERR flags argument to redis.register_function must be a table representing function flags')
    end
    for _, f in ipairs(flags) do
      if not FLAGS[f] then fail('ERR unknown flag given') end
      flag_list[#flag_list + 1] = f
    end
  end
  registered[#registered + 1] = {raw_tostring(name), callback, flag_list, description}
end
local load_fields = {register_function = register_function, log = redis.log,
                     LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
                     REDIS_VERSION = version, REDIS_VERSION_NUM = version_num}
local load_redis = raw_setmetatable({}, {__index = function(_, k)
  local v = load_fields[k]
  if v == nil then
    raw_error("Script attempted to access nonexistent global variable '" .. raw_tostring(k) .. "'", 2)
  end
  return v
end, __newindex = readonly_error, __metatable = false})
readonly[load_redis] = true
local fn_env = raw_setmetatable({}, {__index = function(_, k)
  if k == 'redis' then
    if loading then return load_redis end
    return env_globals.redis
  end
  if loading then  -- a library's code sees nothing but redis while it loads, as in Redis
    raw_error("Script attempted to access nonexistent global variable '" .. raw_tostring(k) .. "'", 2)
  end
  local v = raw_rawget(env_globals, k)
  if v == nil or k == 'KEYS' or k == 'ARGV' then
    raw_error("Script attempted to access nonexistent global variable '" .. raw_tostring(k) .. "'", 2)
  end
  return v
end, __newindex = readonly_error, __metatable = false})
readonly[fn_env] = true

-- load_library(code) -> true, {{name, callback, flags, description}, ...} | false, message
local function load_library(body)
  if body:sub(1, 1) == '\27' then return false, 'binary chunks are not allowed', true end
  local f, msg = loadstring_(body, '@user_function')
  if not f then return false, msg, true end
  f = plain_calls(f, '@user_function')
  setfenv_(f, fn_env)
  registered, loading, killed = {}, true, false
  sethook(hook, '', HOOK_COUNT)
  local ok, err = raw_xpcall(f, handler)
  sethook()
  loading = false
  local r = registered
  registered = nil
  if not ok then return false, err.err or 'ERR unknown error', false end
  return true, r
end

-- run_function(callback, keys, args) -> as run
local function run_function(callback, keys, args)
  killed = false
  sethook(hook, '', HOOK_COUNT)
  local ok, v = raw_xpcall(function() return callback(keys, args) end, handler)
  sethook()
  return ok, v
end

-- A table's fields for the reply conversion, in one call from Python.
-- Read raw, as Redis reads them: a metatable's __index is never called.
local function fields(t)
  local err, ok = raw_rawget(t, 'err'), raw_rawget(t, 'ok')
  if raw_type(err) == 'string' then
    return 'err', err, raw_rawget(t, 'ignore_error_stats_update') == true
  end
  if raw_type(ok) == 'string' then return 'ok', ok end
  local v = raw_rawget(t, 'double')
  if raw_type(v) == 'number' then return 'double', v end
  v = raw_rawget(t, 'big_number')
  if raw_type(v) == 'string' then return 'big_number', v end
  v = raw_rawget(t, 'map')
  if raw_type(v) == 'table' then return 'map', v end
  v = raw_rawget(t, 'set')
  if raw_type(v) == 'table' then return 'set', v end
  v = raw_rawget(t, 'verbatim_string')
  if raw_type(v) == 'table' then return 'verbatim_string', v end
  return nil
end

local function array(t)
  local out, i = {}, 1
  while true do
    local v = raw_rawget(t, i)
    if v == nil then break end
    out[i] = v
    i = i + 1
  end
  return i - 1, out
end

return compile, run, fields, array, load_library, run_function
"""


class LuaRuntime:
    """The interpreter, sandboxed, with the ``redis`` library wired to
    ``executor(argv, raise_errors) -> (ok, value)``; ``acl_checker(argv)``
    answers redis.acl_check_cmd (None: no such command)."""

    def __init__(self, executor: Callable[[list[bytes], bool], Any],
                 kill_check: Callable[[], bytes | None] = lambda: None,
                 logger: Callable[[int, bytes], None] = lambda level, msg: None,
                 acl_checker: Callable[[list[bytes]], bool | None] =
                 lambda argv: None if table.lookup(argv) is None else True) -> None:
        # No attribute of a Python object is reachable from Lua: a script
        # sees no Python object (the redis.* callables are Lua functions).
        self.lua = lua51.LuaRuntime(encoding=None, register_eval=False, register_builtins=False,
                                    unpack_returned_tuples=True, attribute_filter=_no_attributes)
        self.executor = executor
        self.kill_check = kill_check
        self.logger = logger
        self.acl_checker = acl_checker
        self.resp = 2  # the script's protocol (redis.setresp)
        self.client_resp = 2  # the protocol of the client the reply goes to
        if sys.getrecursionlimit() < LUA_REPLY_DEPTH + 2000:  # room for to_reply's levels
            sys.setrecursionlimit(LUA_REPLY_DEPTH + 2000)
        for install in LIBRARY_INSTALLERS:
            install(self.lua)
        code = _BOOTSTRAP.replace("HOOK_COUNT", str(HOOK_COUNT))
        loader = self.lua.execute("return function(...) "
                                  "local f = assert(loadstring(..., '=tidelog')) return f end",
                                  )
        boot = loader(code.encode())
        (self._compile, self._run, self._fields, self._array, self._load_library,
         self._run_function) = boot(
            self._call, self._pcall, self._check, self._log, self._setresp, self._sha1,
            self._set_repl, self._errmsg, REDIS_VERSION.encode(), _version_num(REDIS_VERSION),
            self._acl_check, _spread, without_tail_calls)
        self._table_from = self.lua.table_from
        self._lua_type = lua51.lua_type

    # -- callbacks from Lua -------------------------------------------------------------
    # Scripts reach these through Lua functions (lua_function in the
    # bootstrap); an error they raise is seen at the script's line, scripts
    # being compiled without tail calls (tailcalls.py).
    # A command's error is counted in the error statistics where it arose:
    # the error as the script sees it says so (ignore_error_stats_update, as
    # in Redis), so that passing it on does not count it again.
    def _call(self, *args: Any) -> Any:
        argv = self._argv(args)
        if argv.__class__ is not list:
            raise ScriptCallError(argv)
        ok, value = self.executor(argv, True)
        if ok:
            return value
        raise ScriptCallError(value, counted=True)

    def _pcall(self, *args: Any) -> Any:
        argv = self._argv(args)
        if argv.__class__ is not list:
            return self._table_from({b"err": argv})
        ok, value = self.executor(argv, False)
        if ok:
            return value
        return self._table_from({b"err": value, b"ignore_error_stats_update": True})

    @staticmethod
    def _argv(args: tuple[Any, ...]) -> list[bytes] | bytes:
        """A call's arguments as a command's argv, or the error refusing them."""
        if not args:
            return errors.SCRIPT_NO_ARGS
        argv = []
        for a in args:
            t = a.__class__
            if t is bytes:
                argv.append(a)
            elif t is int:
                argv.append(b"%d" % a)
            elif t is float:
                argv.append(_lua_number_arg(a))
            else:
                return errors.SCRIPT_BAD_ARG
        return argv

    def _acl_check(self, *args: Any) -> bool:
        """redis.acl_check_cmd: may the script's caller run this command?"""
        if not args:
            raise ScriptCallError(errors.SCRIPT_NO_ARGS)
        argv = [a if isinstance(a, bytes) else _lua_tostring(a) for a in args]
        allowed = self.acl_checker(argv) if isinstance(args[0], bytes) else None
        if allowed is None:
            raise ScriptCallError(b"ERR Invalid command passed to redis.acl_check_cmd()")
        return allowed

    @staticmethod
    def _errmsg(err: Any) -> tuple[bytes, bool] | None:
        """The message of an error a redis.* function raised, and whether it
        is already counted in the error statistics."""
        return (err.message, err.counted) if isinstance(err, ScriptCallError) else None

    def _check(self) -> bytes | None:
        return self.kill_check()

    def _log(self, *args: Any) -> None:
        if len(args) < 2:
            raise ScriptCallError(b"ERR redis.log() requires two arguments or more.")
        level = _lua_tonumber(args[0])
        if level is None:
            raise ScriptCallError(b"ERR First argument must be a number (log level).")
        level = _c_int(level)
        if not LOG_DEBUG <= level <= LOG_WARNING:
            raise ScriptCallError(errors.SCRIPT_LOG_LEVEL)
        # the strings and numbers, as lua_tolstring gives them; the rest is left out
        parts = [p if isinstance(p, bytes) else _lua_tostring(p) for p in args[1:]
                 if isinstance(p, (bytes, int, float)) and not isinstance(p, bool)]
        self.logger(level, b" ".join(parts))

    def _setresp(self, *args: Any) -> None:
        if len(args) != 1:
            raise ScriptCallError(b"ERR redis.setresp() requires one argument.")
        resp = _c_int(_lua_tonumber(args[0]) or 0)  # as Redis reads it: lua_tonumber, an int
        if resp != 2 and resp != 3:
            raise ScriptCallError(errors.SCRIPT_RESP_VERSION)
        self.resp = resp

    @staticmethod
    def _set_repl(*args: Any) -> None:
        if len(args) != 1:
            raise ScriptCallError(errors.SCRIPT_SET_REPL_ARGS)
        if _c_int(_lua_tonumber(args[0]) or 0) & ~REPL_ALL:
            raise ScriptCallError(errors.SCRIPT_SET_REPL_FLAGS)

    @staticmethod
    def _sha1(*args: Any) -> bytes:
        if len(args) != 1:
            raise ScriptCallError(b"ERR wrong number of arguments")
        s = args[0]
        if isinstance(s, bytes):
            data = s
        elif isinstance(s, (int, float)) and not isinstance(s, bool):
            data = _lua_tostring(s)
        else:
            data = b""  # what is no string hashes as the empty one
        return hashlib.sha1(data).hexdigest().encode()

    # -- scripts ------------------------------------------------------------------------
    def compile(self, body: bytes, name: bytes = b"@user_script") -> Any:
        """The compiled chunk; ScriptError with Lua's message when it does not compile."""
        result = self._compile(body, name)
        if result.__class__ is tuple:
            raise CompileError(result[1] if isinstance(result[1], bytes) else str(result[1]).encode())
        return result

    def run(self, fn: Any, keys: list[bytes], args: list[bytes]) -> tuple[bool, Any]:
        """Run a compiled chunk with KEYS and ARGV: ``(True, value)`` or
        ``(False, (message, source, line))``."""
        self.resp = 2
        table_from = self._table_from
        result = self._run(fn, table_from(keys), table_from(args))
        return self._outcome(result)

    def _outcome(self, result: Any) -> tuple[bool, Any]:
        ok, value = result if result.__class__ is tuple else (result, None)
        if ok:
            return True, value
        if self._lua_type(value) != "table":
            return False, (errors.SCRIPT_UNKNOWN_ERROR, None, None, False)
        err = value[b"err"]
        if err is None:
            message = errors.SCRIPT_UNKNOWN_ERROR
        elif isinstance(err, bytes):
            message = err
        else:
            message = _lua_tostring(err)
        return False, (message, value[b"source"], value[b"line"],
                       value[b"ignore_error_stats_update"] is True)

    def load_library(self, code: bytes) -> list[tuple[bytes, Any, list[bytes], bytes | None]]:
        """Run a library's code (FUNCTION LOAD): the functions it registered,
        as (name, callback, flags, description); CompileError (compile=True
        on the exception) or LibraryError with Redis's message."""
        result = self._load_library(code)
        if result[0]:
            registered = result[1]
            out = []
            for i in range(1, len(registered) + 1):
                entry = registered[i]
                flags = entry[3]
                out.append((entry[1], entry[2], [flags[j] for j in range(1, len(flags) + 1)],
                            entry[4]))
            return out
        message = result[1]
        if not isinstance(message, bytes):
            message = _lua_tostring(message)
        if len(result) > 2 and result[2]:
            raise CompileError(message)
        raise LibraryError(message)

    def run_function(self, callback: Any, keys: list[bytes], args: list[bytes]) -> tuple[bool, Any]:
        """Call a registered function with its keys and args tables, as :meth:`run`."""
        self.resp = 2
        table_from = self._table_from
        result = self._run_function(callback, table_from(keys), table_from(args))
        return self._outcome(result)

    # -- conversions --------------------------------------------------------------------
    def to_lua(self, reply: Any) -> Any:
        """A command's reply as the script sees it (its ``setresp`` protocol)."""
        t = reply.__class__
        if t is bytes:
            return reply
        if t is int:
            if -_INT64 <= reply < _INT64:
                return reply
            text = b"%d" % reply  # beyond 64 bits: a big number, as the client would get it
            return self._table_from({b"big_number": text}) if self.resp == 3 else text
        if t is SimpleString:
            return self._table_from({b"ok": reply.text})
        if t is list or t is tuple:
            return self._table_from([self.to_lua(r) for r in reply])
        resp3 = self.resp == 3
        if reply is None or reply is NULL_ARRAY:
            return None if resp3 else False
        if t is bool:
            return reply if resp3 else int(reply)
        if t is str:
            return reply.encode()
        if t is float:
            if resp3:
                return self._table_from({b"double": reply})
            return format_double(reply)
        if t is DoubleText:  # as Redis reads a RESP3 double: strtod of its text
            if resp3:
                return self._table_from({b"double": float(reply.text)})
            return reply.text
        if t is Map:
            if resp3:
                inner = self.lua.table()
                for k, v in reply.items:
                    inner[self.to_lua(k)] = self.to_lua(v)
                return self._table_from({b"map": inner})
            flat = []
            for k, v in reply.items:
                flat += (self.to_lua(k), self.to_lua(v))
            return self._table_from(flat)
        if t is SetReply:
            if resp3:
                inner = self.lua.table()
                for v in reply.items:
                    inner[self.to_lua(v)] = True
                return self._table_from({b"set": inner})
            return self._table_from([self.to_lua(v) for v in reply.items])
        if t is Verbatim:
            if resp3:
                return self._table_from({b"verbatim_string": self._table_from(
                    {b"format": reply.fmt, b"string": reply.text})})
            return reply.text
        if t is ErrorReply:
            return self._table_from({b"err": reply.message})
        if t is RawReply:  # pre-encoded (DEBUG PROTOCOL's samples): read back
            return self.to_lua(decode_reply(reply))
        raise TypeError(f"no Lua form for {reply!r}")

    def error_counted(self, value: Any) -> bool:
        """Is this script value an error table already counted in the error
        statistics (a command's error passed on)?"""
        if self._lua_type(value) != "table":
            return False
        found = self._fields(value)
        return found.__class__ is tuple and len(found) == 3 and found[2] is True

    def to_reply(self, value: Any, depth: int = 0) -> Any:
        """A script's Lua value as a reply (for a client speaking any protocol).

        Tables are read raw (a metatable's __index is not called, as in
        Redis); past LUA_REPLY_DEPTH nested tables (a table holding itself)
        the innermost one becomes Redis's "reached lua stack limit" error."""
        t = value.__class__
        if t is bytes:
            return value
        if t is int:
            return value
        if t is float:
            return _truncate(value)
        if value is None:
            return None
        if t is bool:
            if self.resp == 3:
                return value
            return 1 if value else None
        if self._lua_type(value) != "table":
            return None  # functions, coroutines, userdata: nil
        if depth >= LUA_REPLY_DEPTH:
            return ErrorReply(errors.LUA_STACK_LIMIT)
        depth += 1
        found = self._fields(value)
        if found.__class__ is tuple:
            kind, inner = found[0], found[1]
            if kind == b"err":
                return ErrorReply(inner)
            if kind == b"ok":
                return SimpleString(inner.replace(b"\r", b" ").replace(b"\n", b" "))
            if kind == b"double":
                return float(inner) if isinstance(inner, (int, float)) else 0.0
            if kind == b"big_number":  # CR and LF become spaces, as in Redis
                text = (inner if isinstance(inner, bytes) else _lua_tostring(inner)) \
                    .replace(b"\r", b" ").replace(b"\n", b" ")
                return RawReply(b"(%s\r\n" % text) if self.client_resp == 3 else text
            if kind == b"map" and self._lua_type(inner) == "table":
                return Map([(self.to_reply(k, depth), self.to_reply(v, depth))
                            for k, v in inner.items()])
            if kind == b"set" and self._lua_type(inner) == "table":
                return SetReply([self.to_reply(k, depth) for k in inner.keys()])
            if kind == b"verbatim_string" and self._lua_type(inner) == "table":
                return Verbatim(inner[b"string"] or b"", inner[b"format"] or b"txt")
        n, items = self._array(value)
        out = []
        for i in range(1, n + 1):  # a loop, not a comprehension: one frame per level
            out.append(self.to_reply(items[i], depth))
        return out


def _spread(fn: Callable[..., Any], args: Any, n: int) -> Any:
    """Call ``fn`` with the ``n`` values of the Lua table ``args`` (the
    calls with too many arguments for Lua's stack, see ``lua_function``)."""
    return fn(*[args[i] for i in range(1, n + 1)])


class ScriptCallError(Exception):
    """An error a redis.* function raises into the script (``message``: the
    error text; ``counted``: a command's error, counted where it arose)."""

    def __init__(self, message: bytes, counted: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.counted = counted


class LibraryError(Exception):
    """A library's code failed while loading: ``message`` is the error text."""

    def __init__(self, message: bytes) -> None:
        super().__init__(message)
        self.message = message


class CompileError(Exception):
    """A script did not compile: ``message`` is Lua's."""

    def __init__(self, message: bytes) -> None:
        super().__init__(message)
        self.message = message


def decode_reply(data: bytes) -> Any:
    """A pre-encoded reply (RESP2 or RESP3) as reply values; attributes
    are skipped, as Redis's script client skips them."""
    value, end = _decode(data, 0)
    if end != len(data):
        raise ValueError("trailing bytes after a reply")
    return value


def _decode(data: bytes, at: int) -> tuple[Any, int]:
    kind = data[at:at + 1]
    eol = data.index(b"\r\n", at)
    line, at = data[at + 1:eol], eol + 2
    if kind == b"|":  # an attribute: its pairs, then the reply it is about
        for _ in range(2 * int(line)):
            at = _decode(data, at)[1]
        return _decode(data, at)
    if kind == b"+":
        return SimpleString(line), at
    if kind == b"-":
        return ErrorReply(line), at
    if kind == b":" or kind == b"(":
        return int(line), at
    if kind == b",":
        return float(line), at
    if kind == b"#":
        return line == b"t", at
    if kind == b"_":
        return None, at
    if kind == b"$" or kind == b"=":
        n = int(line)
        if n < 0:
            return None, at
        body = data[at:at + n]
        if kind == b"=":
            return Verbatim(body[4:], body[:3]), at + n + 2
        return body, at + n + 2
    if kind in (b"*", b"~", b">", b"%"):
        n = int(line)
        if n < 0:
            return NULL_ARRAY, at
        items = []
        for _ in range(2 * n if kind == b"%" else n):
            item, at = _decode(data, at)
            items.append(item)
        if kind == b"%":
            return Map(list(zip(items[::2], items[1::2]))), at
        if kind == b"~":
            return SetReply(items), at
        return items, at  # an array, or a push (read as an array)
    raise ValueError(f"unknown reply type {kind!r}")


def _no_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    raise AttributeError("no attribute access from Lua")


def _version_num(version: str) -> int:
    """``8.10.0`` as Redis's number: one byte each, 0x080a00."""
    major, minor, patch = (int(p) for p in version.split("."))
    return (major << 16) | (minor << 8) | patch


def _truncate(x: float) -> int:
    if x != x or not -(2.0 ** 63) <= x < 2.0 ** 63:
        return -(2 ** 63)  # what the C cast gives on x86-64
    return int(x)


def _lua_number_arg(x: float) -> bytes:
    """A Lua number as a command argument: Redis formats it with %.17g."""
    if x == 0:
        return b"-0" if math.copysign(1.0, x) < 0 else b"0"
    if x == x and abs(x) < 1e17 and x == int(x):
        return b"%d" % int(x)
    return (b"%.17g" % x)


_LUA_NUMBER = re.compile(rb"\s*[-+]?(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)\s*")


def _lua_tonumber(x: Any) -> float | None:
    """Lua 5.1's lua_tonumber: a number, or a string that reads as one
    (decimal or hexadecimal, blanks around it); None otherwise."""
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return x
    if isinstance(x, bytes) and _LUA_NUMBER.fullmatch(x):
        text = x.strip()
        sign = -1 if text[:1] == b"-" else 1
        digits = text.lstrip(b"+-")
        return sign * int(digits, 16) if digits[:2].lower() == b"0x" else float(text)
    return None


def _c_int(x: float) -> int:
    """A C cast of a double to int: truncated (what no int can hold: 0)."""
    if x != x or not -(2.0 ** 31) < x < 2.0 ** 31:
        return 0
    return int(x)


def _lua_tostring(x: Any) -> bytes:
    """Lua's tostring of a number (%.14g)."""
    if isinstance(x, float):
        if x == x and abs(x) < 1e15 and x == int(x):
            return b"%d" % int(x)
        return b"%.14g" % x
    return str(x).encode()


def sha1hex(body: bytes) -> bytes:
    return hashlib.sha1(body).hexdigest().encode()


def clock() -> float:
    return time.perf_counter()
