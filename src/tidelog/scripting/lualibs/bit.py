"""``bit``: LuaBitOp 1.0 as Redis's Lua 5.1 has it, in Lua.

Arguments become 32-bit integers the way LuaBitOp does it on doubles (add
2^52 + 2^51 and take the low 32 bits of the sum's bits: rounding to nearest, and
wrapping modulo 2^32); results are signed 32-bit numbers.  ``tohex(x, n)`` writes
``|n|`` hex digits (at most 8), upper case when ``n`` is negative.
"""

from __future__ import annotations

from typing import Any

from ._support import support

SOURCE = r"""
local S = ...
local cfunc, typeerror = S.cfunc, S.typeerror
local type, tonumber, select = type, tonumber, select
local floor, frexp, huge = math.floor, math.frexp, math.huge
local sub, concat = string.sub, table.concat

local TWO32 = 4294967296

-- LuaBitOp's barg: the argument's number plus 2^52+2^51, the low 32 bits of its
-- mantissa (0 for what is no number, which is then refused)
local function barg(fname, narg, n, v)
  local x = v
  if type(x) ~= "number" then
    x = type(x) == "string" and tonumber(x) or nil
    if x == nil then typeerror(fname, narg, n, v, "number") end
  end
  local s = x + 6755399441055744
  if s >= 4503599627370496 and s < 9007199254740992 then
    return s % TWO32
  end
  if s ~= s or s == huge or s == -huge or s == 0 then return 0 end
  if s < 0 then s = -s end
  local m = frexp(s)
  return (m * 9007199254740992) % TWO32
end

local function ret(u)
  if u >= 2147483648 then return u - TWO32 end
  return u
end

local AND, OR, XOR = {}, {}, {}
for a = 0, 15 do
  for b = 0, 15 do
    local r_and, r_or, r_xor, bit = 0, 0, 0, 1
    local x, y = a, b
    for _ = 1, 4 do
      local p, q = x % 2, y % 2
      if p == 1 and q == 1 then r_and = r_and + bit end
      if p == 1 or q == 1 then r_or = r_or + bit end
      if p ~= q then r_xor = r_xor + bit end
      x, y, bit = (x - p) / 2, (y - q) / 2, bit * 2
    end
    AND[a * 16 + b], OR[a * 16 + b], XOR[a * 16 + b] = r_and, r_or, r_xor
  end
end

local function op(tbl, a, b)
  local r, m = 0, 1
  for _ = 1, 8 do
    local x, y = a % 16, b % 16
    r = r + tbl[x * 16 + y] * m
    a, b, m = (a - x) / 16, (b - y) / 16, m * 16
  end
  return r
end

local M = {}

cfunc(M, "tobit", function(...)
  return ret(barg("tobit", 1, select("#", ...), (...)))
end)

cfunc(M, "bnot", function(...)
  return ret(TWO32 - 1 - barg("bnot", 1, select("#", ...), (...)))
end)

local function variadic(fname, tbl)
  cfunc(M, fname, function(...)
    local n = select("#", ...)
    local b = barg(fname, 1, n, (...))
    for i = n, 2, -1 do
      b = op(tbl, b, barg(fname, i, n, (select(i, ...))))
    end
    return ret(b)
  end)
end
variadic("band", AND)
variadic("bor", OR)
variadic("bxor", XOR)

local function shift(fname, f)
  cfunc(M, fname, function(...)
    local n = select("#", ...)
    local x, y = ...
    local b = barg(fname, 1, n, x)
    local s = barg(fname, 2, n, y) % 32
    return ret(f(b, s))
  end)
end
shift("lshift", function(b, s) return (b * 2 ^ s) % TWO32 end)
shift("rshift", function(b, s) return floor(b / 2 ^ s) end)
shift("arshift", function(b, s)
  if b >= 2147483648 then b = b - TWO32 end
  return floor(b / 2 ^ s) % TWO32
end)
shift("rol", function(b, s) return (b * 2 ^ s) % TWO32 + floor(b / 2 ^ (32 - s)) end)
shift("ror", function(b, s) return floor(b / 2 ^ s) + (b * 2 ^ (32 - s)) % TWO32 end)

cfunc(M, "bswap", function(...)
  local b = barg("bswap", 1, select("#", ...), (...))
  local b0 = b % 256
  local b1 = floor(b / 256) % 256
  local b2 = floor(b / 65536) % 256
  local b3 = floor(b / 16777216)
  return ret(((b0 * 256 + b1) * 256 + b2) * 256 + b3)
end)

local LOWER, UPPER = "0123456789abcdef", "0123456789ABCDEF"
cfunc(M, "tohex", function(...)
  local n = select("#", ...)
  local x, y = ...
  local b = barg("tohex", 1, n, x)
  local digits = 8
  if n >= 2 then digits = ret(barg("tohex", 2, n, y)) end
  local hex = LOWER
  if digits < 0 then digits = -digits; hex = UPPER end
  if digits > 8 then digits = 8 end
  local out = {}
  for i = digits, 1, -1 do
    local d = b % 16
    out[i] = sub(hex, d + 1, d + 1)
    b = (b - d) / 16
  end
  return concat(out, "", 1, digits)
end)

return M
"""


def install(lua: Any) -> None:
    """Set the global ``bit`` of the lupa Lua 5.1 runtime ``lua``."""
    lua.globals()[b"bit"] = lua.execute(SOURCE, support(lua))
