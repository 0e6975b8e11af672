"""What the four libraries share: C-function wrappers and Lua's argument checks, in Lua.

Redis's libraries are C functions.  Two things about a C function show in what a
script sees: an error it raises with ``luaL_error`` starts with the position of the
*caller* (``user_script:1: ...``), even after a tail call (``return
cjson.encode(x)``), and an error handler looking at the stack finds a C function
below it.  A Lua function can do neither (after a tail call its caller's frame is
gone), so every library function here runs inside a coroutine behind
``coroutine.wrap``, which is a C function: when the coroutine fails with a string,
the wrapper prefixes the caller's position exactly as ``luaL_error`` does.

A coroutine that failed is dead, and Lua 5.1 cannot change a C function's
upvalue, so a failing call puts a fresh wrapper into the library table before its
error leaves: ``cjson.encode`` works again at once, but a copy of the old value
kept in a variable (``local enc = cjson.encode``) answers "cannot resume dead
coroutine" after it raised an error once.  The library tables must therefore stay
the tables ``install`` made (make them read-only with a proxy, never a copy).
"""

from __future__ import annotations

from typing import Any

SUPPORT = r"""
local S = {}
local co_yield, co_wrap = coroutine.yield, coroutine.wrap
local rawset = rawset
local pcall, error, type, tostring, tonumber, floor, ceil, format =
    pcall, error, type, tostring, tonumber, math.floor, math.ceil, string.format

-- Sets M[name] to a C function that runs impl (see the module's docstring).
function S.cfunc(M, name, impl)
  local loop
  local function finish(ok, ...)
    if ok then return ... end
    rawset(M, name, co_wrap(loop))
    error((...), 0)
  end
  loop = function(...)
    return loop(co_yield(finish(pcall(impl, ...))))
  end
  rawset(M, name, co_wrap(loop))
end

function S.fail(msg)
  error(msg, 0)
end

function S.argerror(fname, narg, msg)
  error(format("bad argument #%d to '%s' (%s)", narg, fname, msg), 0)
end

-- luaL_typerror: the type of argument narg of n given ("no value" past the end)
function S.typeerror(fname, narg, n, v, expected)
  local got = narg > n and "no value" or type(v)
  S.argerror(fname, narg, expected .. " expected, got " .. got)
end

-- luaL_checknumber: numbers and strings that convert to one
function S.checknumber(fname, narg, n, v)
  local t = type(v)
  if t == "number" then return v end
  if t == "string" then
    local x = tonumber(v)
    if x then return x end
  end
  S.typeerror(fname, narg, n, v, "number")
end

-- a lua_Number cast to lua_Integer (64 bits; out of range and NaN give the minimum)
function S.tointeger(x)
  if x ~= x or x >= 9223372036854775808 or x < -9223372036854775808 then
    return -9223372036854775808
  end
  if x >= 0 then return floor(x) end
  return ceil(x)
end

function S.checkinteger(fname, narg, n, v)
  return S.tointeger(S.checknumber(fname, narg, n, v))
end

-- luaL_checklstring: strings, and numbers converted with "%.14g"
function S.checkstring(fname, narg, n, v)
  local t = type(v)
  if t == "string" then return v end
  if t == "number" then return tostring(v) end
  S.typeerror(fname, narg, n, v, "string")
end

-- IEEE 754 bits in 32-bit pieces ------------------------------------------------

local frexp, ldexp, huge, sub = math.frexp, math.ldexp, math.huge, string.sub

local function negative_nan(x)
  return sub(tostring(x), 1, 1) == "-"
end

local function rne(y)
  local f = floor(y)
  local d = y - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end

-- the bits of (float)x: rounded to nearest even, overflowing to infinity
function S.float_bits(x)
  if x ~= x then return negative_nan(x) and 0xFFC00000 or 0x7FC00000 end
  local sign = 0
  if x < 0 or (x == 0 and 1 / x < 0) then sign = 0x80000000; x = -x end
  if x == huge then return sign + 0x7F800000 end
  if x == 0 then return sign end
  local m, e = frexp(x)
  local biased = e + 126
  local bits
  if biased >= 1 then
    bits = biased * 8388608 + rne(m * 16777216) - 8388608
  else
    bits = rne(ldexp(x, 149))
  end
  if bits > 0x7F800000 then bits = 0x7F800000 end
  return sign + bits
end

local function nan(negative)
  local z = 0
  local n = z / z
  if negative_nan(n) ~= negative then n = -n end
  return n
end

function S.float_from_bits(u)
  local negative = u >= 0x80000000
  if negative then u = u - 0x80000000 end
  local biased = floor(u / 8388608)
  local f = u % 8388608
  local x
  if biased == 255 then
    if f ~= 0 then return nan(negative) end
    x = huge
  elseif biased == 0 then
    x = ldexp(f, -149)
  else
    x = ldexp(f + 8388608, biased - 150)
  end
  if negative then return -x end
  return x
end

-- the bits of a double as (high 32, low 32)
function S.double_bits(x)
  if x ~= x then return negative_nan(x) and 0xFFF80000 or 0x7FF80000, 0 end
  local sign = 0
  if x < 0 or (x == 0 and 1 / x < 0) then sign = 0x80000000; x = -x end
  if x == huge then return sign + 0x7FF00000, 0 end
  if x == 0 then return sign, 0 end
  local m, e = frexp(x)
  local biased = e + 1022
  local f
  if biased >= 1 then
    f = (m * 2 - 1) * 4503599627370496
  else
    biased = 0
    f = ldexp(x, 1074)
  end
  return sign + biased * 1048576 + floor(f / 4294967296), f % 4294967296
end

function S.double_from_bits(hi, lo)
  local negative = hi >= 0x80000000
  if negative then hi = hi - 0x80000000 end
  local biased = floor(hi / 1048576)
  local f = (hi % 1048576) * 4294967296 + lo
  local x
  if biased == 2047 then
    if f ~= 0 then return nan(negative) end
    x = huge
  elseif biased == 0 then
    x = ldexp(f, -1074)
  else
    x = ldexp(f + 4503599627370496, biased - 1075)
  end
  if negative then return -x end
  return x
end

-- big-endian bytes of a 32-bit unsigned number, and back
local char, byte = string.char, string.byte
function S.u32be(u)
  return char(floor(u / 16777216), floor(u / 65536) % 256, floor(u / 256) % 256, u % 256)
end
function S.be32(s, p)
  local a, b, c, d = byte(s, p, p + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

return S
"""


def support(lua: Any) -> Any:
    """The helper table of SUPPORT, made in ``lua`` (once per runtime)."""
    return lua.execute(SUPPORT)
