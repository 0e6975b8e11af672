"""``cmsgpack``: Redis's MessagePack library (lua-cmsgpack 0.4.0), in Lua.

``pack`` concatenates its arguments' encodings: integral numbers in the smallest
integer form, others as a float when a float holds them exactly, else a double;
strings as fixstr/str8/str16/str32; a table as an array when its keys are exactly
1..n, else as a map; tables nested 16 deep as nil; anything else as nil.
``unpack`` answers every value, ``unpack_one``/``unpack_limit`` the next offset
(-1 at the end) and at most 1/``limit`` values.
"""

from __future__ import annotations

from typing import Any

from ._support import support

SOURCE = r"""
local S = ...
local cfunc, fail, argerror, checkstring, checkinteger =
    S.cfunc, S.fail, S.argerror, S.checkstring, S.checkinteger
local float_bits, float_from_bits, double_bits, double_from_bits, u32be, be32 =
    S.float_bits, S.float_from_bits, S.double_bits, S.double_from_bits, S.u32be, S.be32
local type, next, rawset, select, unpack = type, next, rawset, select, unpack
local floor, huge = math.floor, math.huge
local char, byte, sub, format = string.char, string.byte, string.sub, string.format
local concat = table.concat

local MAX_NESTING = 16
local TWO32 = 4294967296

local function u16be(u)
  return char(floor(u / 256), u % 256)
end

-- a 64-bit two's complement integer (|x| < 2^63, integral) as (high, low)
local function int64(x)
  if x >= 0 then return floor(x / TWO32), x % TWO32 end
  local a = -x
  local hi, lo = floor(a / TWO32), a % TWO32
  if lo == 0 then return (TWO32 - hi) % TWO32, 0 end
  return TWO32 - 1 - hi, TWO32 - lo
end

local function encode_integer(x)
  if x >= 0 then
    if x <= 127 then return char(x) end
    if x <= 255 then return "\204" .. char(x) end
    if x <= 65535 then return "\205" .. u16be(x) end
    if x <= 4294967295 then return "\206" .. u32be(x) end
    local hi, lo = int64(x)
    return "\207" .. u32be(hi) .. u32be(lo)
  end
  if x >= -32 then return char(x + 256) end
  if x >= -128 then return "\208" .. char(x + 256) end
  if x >= -32768 then return "\209" .. u16be(x + 65536) end
  if x >= -2147483648 then return "\210" .. u32be(x + TWO32) end
  local hi, lo = int64(x)
  return "\211" .. u32be(hi) .. u32be(lo)
end

local function encode_number(x)
  if x == x and x ~= huge and x ~= -huge and x >= -9223372036854775808
      and x < 9223372036854775808 and floor(x) == x then
    return encode_integer(x)
  end
  local f = float_bits(x)
  if float_from_bits(f) == x then return "\202" .. u32be(f) end
  local hi, lo = double_bits(x)
  return "\203" .. u32be(hi) .. u32be(lo)
end

local function encode_string(s)
  local len = #s
  if len < 32 then return char(0xA0 + len) .. s end
  if len <= 255 then return "\217" .. char(len) .. s end
  if len <= 65535 then return "\218" .. u16be(len) .. s end
  return "\219" .. u32be(len) .. s
end

local encode

-- keys exactly 1..n (each a positive number that an int holds)
local function is_array(t)
  local count, max = 0, 0
  for k in next, t do
    if type(k) ~= "number" or k <= 0 or k > 2147483647 or floor(k) ~= k then
      return false
    end
    if k > max then max = k end
    count = count + 1
  end
  return max == count
end

local function encode_table(buf, n, t, level)
  if is_array(t) then
    local len = #t
    n = n + 1
    if len <= 15 then buf[n] = char(0x90 + len)
    elseif len <= 65535 then buf[n] = "\220" .. u16be(len)
    else buf[n] = "\221" .. u32be(len) end
    for j = 1, len do
      n = encode(buf, n, t[j], level + 1)
    end
    return n
  end
  local len = 0
  for _ in next, t do len = len + 1 end
  n = n + 1
  if len <= 15 then buf[n] = char(0x80 + len)
  elseif len <= 65535 then buf[n] = "\222" .. u16be(len)
  else buf[n] = "\223" .. u32be(len) end
  for k, v in next, t do
    n = encode(buf, n, k, level + 1)
    n = encode(buf, n, v, level + 1)
  end
  return n
end

encode = function(buf, n, v, level)
  local t = type(v)
  if t == "table" and level < MAX_NESTING then return encode_table(buf, n, v, level) end
  n = n + 1
  if t == "string" then buf[n] = encode_string(v)
  elseif t == "number" then buf[n] = encode_number(v)
  elseif t == "boolean" then buf[n] = v and "\195" or "\194"
  else buf[n] = "\192" end
  return n
end

-- decoding -------------------------------------------------------------------

local EOF, BADFMT = "Missing bytes in input.", "Bad data format in input."
local STACK_LIMIT = 8000
local TOO_MANY = "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"
local ARRAY_OVERFLOW = "stack overflow (in function mp_decode_to_lua_array)"

-- one unpack over s from byte offset+1: (values, count, bytes left)
local function decode_stream(s, offset, limit)
  local len = #s
  local p = offset + 1
  local used  -- the slots of the C function's Lua stack in use

  local function need(k)
    if len - p + 1 < k then fail(EOF) end
  end

  local decode

  local function read_table(count, is_map)
    used = used + 1
    if not is_map and used + 1 > STACK_LIMIT then fail(ARRAY_OVERFLOW) end
    local t = {}
    for j = 1, count do
      if is_map then
        local k = decode()
        local v = decode()
        rawset(t, k, v)
        used = used - 2
      else
        used = used + 1
        local v = decode()
        rawset(t, j, v)
        used = used - 2
      end
    end
    return t
  end

  decode = function()
    need(1)
    if used + 1 > STACK_LIMIT then fail(TOO_MANY) end
    used = used + 1
    local c = byte(s, p)
    if c < 0x80 then p = p + 1; return c end
    if c >= 0xE0 then p = p + 1; return c - 256 end
    if c < 0x90 then p = p + 1; used = used - 1; return read_table(c - 0x80, true) end
    if c < 0xA0 then p = p + 1; used = used - 1; return read_table(c - 0x90, false) end
    if c < 0xC0 then
      local l = c - 0xA0
      need(1 + l); local v = sub(s, p + 1, p + l); p = p + 1 + l
      return v
    end
    if c == 0xC0 then p = p + 1; return nil end
    if c == 0xC2 then p = p + 1; return false end
    if c == 0xC3 then p = p + 1; return true end
    if c == 0xCA then need(5); local v = float_from_bits(be32(s, p + 1)); p = p + 5; return v end
    if c == 0xCB then
      need(9); local v = double_from_bits(be32(s, p + 1), be32(s, p + 5)); p = p + 9
      return v
    end
    if c == 0xCC then need(2); local v = byte(s, p + 1); p = p + 2; return v end
    if c == 0xCD then need(3); local a, b = byte(s, p + 1, p + 2); p = p + 3; return a * 256 + b end
    if c == 0xCE then need(5); local v = be32(s, p + 1); p = p + 5; return v end
    if c == 0xD0 then
      need(2); local v = byte(s, p + 1); p = p + 2
      if v >= 128 then v = v - 256 end
      return v
    end
    if c == 0xD1 then
      need(3); local a, b = byte(s, p + 1, p + 2); p = p + 3
      local v = a * 256 + b
      if v >= 32768 then v = v - 65536 end
      return v
    end
    if c == 0xD2 then
      need(5); local v = be32(s, p + 1); p = p + 5
      if v >= 2147483648 then v = v - TWO32 end
      return v
    end
    if c == 0xD3 or c == 0xCF then
      need(9); local hi, lo = be32(s, p + 1), be32(s, p + 5); p = p + 9
      if hi >= 2147483648 then hi = hi - TWO32 end
      return hi * TWO32 + lo
    end
    if c == 0xD9 or c == 0xDA or c == 0xDB then
      local w = c == 0xD9 and 1 or (c == 0xDA and 2 or 4)
      need(1 + w)
      local l
      if w == 1 then l = byte(s, p + 1)
      elseif w == 2 then local a, b = byte(s, p + 1, p + 2); l = a * 256 + b
      else l = be32(s, p + 1) end
      need(1 + w + l)
      local v = sub(s, p + 1 + w, p + w + l); p = p + 1 + w + l
      return v
    end
    if c == 0xDC or c == 0xDD or c == 0xDE or c == 0xDF then
      local w = (c == 0xDC or c == 0xDE) and 2 or 4
      need(1 + w)
      local l
      if w == 2 then local a, b = byte(s, p + 1, p + 2); l = a * 256 + b
      else l = be32(s, p + 1) end
      p = p + 1 + w
      used = used - 1
      return read_table(l, c >= 0xDE)
    end
    fail(BADFMT)
  end

  local values, count = {}, 0
  used = 1
  while p <= len and count < limit do
    count = count + 1
    values[count] = decode()
  end
  return values, count, len - p + 1
end

-- return values[i..n] (Lua's unpack stops near 8000 values)
local function spread(values, i, n)
  if n - i < 200 then return unpack(values, i, n) end
  return values[i], values[i + 1], values[i + 2], values[i + 3], values[i + 4],
    values[i + 5], values[i + 6], values[i + 7], values[i + 8], values[i + 9],
    spread(values, i + 10, n)
end

-- what C's "%d" prints of a 64-bit integer: its low 32 bits, signed
local function int32(x)
  local u = x % TWO32
  if u >= 2147483648 then return u - TWO32 end
  return u
end

local function unpack_full(s, limit, offset)
  local decode_all = limit == 0 and offset == 0
  if offset < 0 or limit < 0 then
    fail(format("Invalid request to unpack with offset of %d and limit of %d.", int32(offset), #s))
  elseif offset > #s then
    fail(format("Start offset %d greater than input length %d.", int32(offset), #s))
  end
  if decode_all or limit > 2147483647 then limit = 2147483647 end
  local values, count, left = decode_stream(s, offset, limit)
  if decode_all then return spread(values, 1, count) end
  return (left == 0 and -1 or #s - left), spread(values, 1, count)
end

local M = {}

cfunc(M, "pack", function(...)
  local n = select("#", ...)
  if n == 0 then argerror("pack", 0, "MessagePack pack needs input.") end
  -- lua_checkstack(L, nargs) on a stack already holding the arguments
  if n + n > STACK_LIMIT then argerror("pack", 0, "Too many arguments for MessagePack pack.") end
  local buf, k = {}, 0
  for i = 1, n do
    k = encode(buf, k, (select(i, ...)), 0)
  end
  return concat(buf, "", 1, k)
end)

cfunc(M, "unpack", function(...)
  local n = select("#", ...)
  return unpack_full(checkstring("unpack", 1, n, (...)), 0, 0)
end)

cfunc(M, "unpack_one", function(...)
  local n = select("#", ...)
  local s, o = ...
  local offset = 0
  if n >= 2 and o ~= nil then offset = (checkinteger("unpack_one", 2, n, o)) end
  return unpack_full(checkstring("unpack_one", 1, n, s), 1, offset)
end)

cfunc(M, "unpack_limit", function(...)
  local n = select("#", ...)
  local s, l, o = ...
  local limit = (checkinteger("unpack_limit", 2, n, l))
  local offset = 0
  if n >= 3 and o ~= nil then offset = (checkinteger("unpack_limit", 3, n, o)) end
  return unpack_full(checkstring("unpack_limit", 1, n, s), limit, offset)
end)

M._NAME = "cmsgpack"
M._VERSION = "lua-cmsgpack 0.4.0"
M._COPYRIGHT = "Copyright (C) 2012, Salvatore Sanfilippo"
M._DESCRIPTION = "MessagePack C implementation for Lua"
return M
"""


def install(lua: Any) -> None:
    """Set the global ``cmsgpack`` of the lupa Lua 5.1 runtime ``lua``."""
    lua.globals()[b"cmsgpack"] = lua.execute(SOURCE, support(lua))
