"""``struct``: Roberto Ierusalimschy's struct library as Redis has it, in Lua.

Formats: ``>`` ``<`` (byte order; little endian by default), ``!n`` (maximum
alignment, 8 without ``n``), ``x`` (a zero byte), ``b B h H l L T i[n] I[n]``
(integers of 1, 2, 8, 8 and n bytes, 4 by default; upper case unsigned), ``f``
``d`` (float, double), ``s`` (zero-terminated string), ``c[n]`` (n bytes; ``c0``:
the whole string when packing, the length unpacked just before when unpacking),
spaces ignored.  ``unpack(fmt, s [, init])`` answers the values and the position
after them.  Integers go through a C ``long`` (64 bits): the rules of its
conversions from and to doubles are followed.
"""

from __future__ import annotations

from typing import Any

from ._support import support

SOURCE = r"""
local S = ...
local cfunc, fail, argerror, checkstring, checknumber, checkinteger, tointeger =
    S.cfunc, S.fail, S.argerror, S.checkstring, S.checknumber, S.checkinteger, S.tointeger
local float_bits, float_from_bits, double_bits, double_from_bits =
    S.float_bits, S.float_from_bits, S.double_bits, S.double_from_bits
local select, tonumber, unpack = select, tonumber, unpack
local floor = math.floor
local char, byte, sub, find, format, reverse, rep =
    string.char, string.byte, string.sub, string.find, string.format, string.reverse, string.rep
local concat = table.concat

local TWO32 = 4294967296
local MAXINTSIZE = 32
local MAXALIGN = 8
local INT_MAX = 2147483647

local function isdigit(c) return c and c >= 48 and c <= 57 end

-- getnum: the digits at fmt[i], or df; answers (number, next index)
local function getnum(fmt, i, df)
  local c = byte(fmt, i)
  if not isdigit(c) then return df, i end
  local a = 0
  repeat
    local d = c - 48
    if a > floor(INT_MAX / 10) or a * 10 > INT_MAX - d then fail("integral size overflow") end
    a = a * 10 + d
    i = i + 1
    c = byte(fmt, i)
  until not isdigit(c)
  return a, i
end

local SIZES = { b = 1, B = 1, h = 2, H = 2, l = 8, L = 8, T = 8, f = 4, d = 8, x = 1 }

local function optsize(opt, fmt, i)
  local size = SIZES[opt]
  if size then return size, i end
  if opt == "c" then return getnum(fmt, i, 1) end
  if opt == "i" or opt == "I" then
    local sz
    sz, i = getnum(fmt, i, 4)
    if sz > MAXINTSIZE then
      fail(format("integral size %d is larger than limit of %d", sz, MAXINTSIZE))
    end
    return sz, i
  end
  return 0, i
end

-- x & y for small non-negative integers
local function band(x, y)
  local r, bit = 0, 1
  while x > 0 and y > 0 do
    local p, q = x % 2, y % 2
    if p == 1 and q == 1 then r = r + bit end
    x, y, bit = (x - p) / 2, (y - q) / 2, bit * 2
  end
  return r
end

local function gettoalign(len, h, opt, size)
  if size == 0 or opt == "c" then return 0 end
  if size > h.align then size = h.align end
  return band(size - band(len, size - 1), size - 1)
end

local function ispow2(x)
  if x <= 0 then return false end
  while x % 2 == 0 do x = x / 2 end
  return x == 1
end

local function controloptions(fname, opt, fmt, i, h)
  if opt == " " then return i end
  if opt == ">" then h.little = false; return i end
  if opt == "<" then h.little = true; return i end
  if opt == "!" then
    local a
    a, i = getnum(fmt, i, MAXALIGN)
    if not ispow2(a) then fail(format("alignment %d is not a power of 2", a)) end
    h.align = a
    return i
  end
  argerror(fname, 1, "invalid format option '" .. opt .. "'")
end

-- the 8 bytes of a C long/unsigned long made from n, least significant first
local function long_bytes(n)
  local hi, lo
  if n < 0 then
    local t = tointeger(n)
    local a = -t
    hi, lo = floor(a / TWO32), a % TWO32
    if lo == 0 then hi = (TWO32 - hi) % TWO32 else hi, lo = TWO32 - 1 - hi, TWO32 - lo end
  else
    -- (unsigned long)n: truncation; on x86-64 2^64 and beyond give 0, NaN 2^63
    if n ~= n then
      hi, lo = 2147483648, 0
    elseif n >= 18446744073709551616 then
      hi, lo = 0, 0
    else
      local t = floor(n)
      hi, lo = floor(t / TWO32), t % TWO32
    end
  end
  local out = {}
  for k = 1, 4 do out[k] = lo % 256; lo = floor(lo / 256) end
  for k = 5, 8 do out[k] = hi % 256; hi = floor(hi / 256) end
  return out
end

local function putinteger(buf, nb, n, little, size)
  local bytes = long_bytes(n)
  local out = {}
  for k = 1, size do out[k] = bytes[k] or 0 end
  local s = char(unpack(out, 1, size))
  if not little then s = reverse(s) end
  nb = nb + 1
  buf[nb] = s
  return nb
end

local function u32le(u)
  return char(u % 256, floor(u / 256) % 256, floor(u / 65536) % 256, floor(u / 16777216))
end

local function le32(s, p)
  local a, b, c, d = byte(s, p, p + 3)
  return ((d * 256 + c) * 256 + b) * 256 + a
end

local M = {}

cfunc(M, "pack", function(...)
  local nargs = select("#", ...)
  local fmt = checkstring("pack", 1, nargs, (...))
  -- b_pack pushes a nil after its arguments: the first missing one is "nil"
  local seen = nargs + 1
  local h = { little = true, align = 1 }
  local arg = 2
  local total = 0
  local buf, nb = {}, 0
  local i, flen = 1, #fmt
  while i <= flen and byte(fmt, i) ~= 0 do
    local opt = sub(fmt, i, i)
    i = i + 1
    local size
    size, i = optsize(opt, fmt, i)
    local toalign = gettoalign(total, h, opt, size)
    total = total + toalign
    if toalign > 0 then nb = nb + 1; buf[nb] = rep("\0", toalign) end
    if opt == "b" or opt == "B" or opt == "h" or opt == "H" or opt == "l" or opt == "L"
        or opt == "T" or opt == "i" or opt == "I" then
      local n = checknumber("pack", arg, seen, (select(arg, ...)))
      arg = arg + 1
      nb = putinteger(buf, nb, n, h.little, size)
    elseif opt == "x" then
      nb = nb + 1; buf[nb] = "\0"
    elseif opt == "f" then
      local n = checknumber("pack", arg, seen, (select(arg, ...)))
      arg = arg + 1
      local s = u32le(float_bits(n))
      if not h.little then s = reverse(s) end
      nb = nb + 1; buf[nb] = s
    elseif opt == "d" then
      local n = checknumber("pack", arg, seen, (select(arg, ...)))
      arg = arg + 1
      local hi, lo = double_bits(n)
      local s = u32le(lo) .. u32le(hi)
      if not h.little then s = reverse(s) end
      nb = nb + 1; buf[nb] = s
    elseif opt == "c" or opt == "s" then
      local s = checkstring("pack", arg, seen, (select(arg, ...)))
      arg = arg + 1
      local l = #s
      if size == 0 then size = l end
      if l < size then argerror("pack", arg, "string too short") end
      nb = nb + 1; buf[nb] = sub(s, 1, size)
      if opt == "s" then
        nb = nb + 1; buf[nb] = "\0"
        size = size + 1
      end
    else
      i = controloptions("pack", opt, fmt, i, h)
    end
    total = total + size
  end
  return concat(buf, "", 1, nb)
end)

-- getinteger: the bytes at data[pos..pos+size-1] through a C unsigned long
local function getinteger(data, pos, little, signed, size)
  -- the last 8 bytes shifted in (most significant first) make the value
  local order = {}
  for k = 1, size do
    order[k] = byte(data, little and (pos + size - k) or (pos + k - 1))
  end
  local first = size > 8 and size - 7 or 1
  local hi, lo = 0, 0
  for k = first, size do
    local b = order[k]
    hi = (hi * 256 + floor(lo / 16777216)) % TWO32
    lo = (lo % 16777216) * 256 + b
  end
  if not signed then return hi * TWO32 + lo end
  -- sign extension: a mask of the bits from size*8-1 up (the shift count taken
  -- modulo 64, as x86 does); any of them set means negative, and sets them all
  local signbit = (size * 8 - 1) % 64
  if signbit >= 32 then
    local keep = 2 ^ (signbit - 32)
    if hi >= keep then hi = hi % keep + (TWO32 - keep) end
  else
    local keep = 2 ^ signbit
    if hi > 0 or lo >= keep then
      lo = lo % keep + (TWO32 - keep)
      hi = TWO32 - 1
    end
  end
  if hi >= 2147483648 then return (hi - TWO32) * TWO32 + lo end
  return hi * TWO32 + lo
end

cfunc(M, "unpack", function(...)
  local nargs = select("#", ...)
  local f, d, init = ...
  local fmt = checkstring("unpack", 1, nargs, f)
  local data = checkstring("unpack", 2, nargs, d)
  local ld = #data
  local pos = 1
  if nargs >= 3 and init ~= nil then pos = checkinteger("unpack", 3, nargs, init) end
  -- a size_t: negative offsets are huge
  if pos == 0 then argerror("unpack", 3, "offset must be 1 or greater") end
  local huge_pos = pos < 0
  pos = pos - 1
  local h = { little = true, align = 1 }
  local results, n = {}, 0
  local i, flen = 1, #fmt
  while i <= flen and byte(fmt, i) ~= 0 do
    local opt = sub(fmt, i, i)
    i = i + 1
    local size
    size, i = optsize(opt, fmt, i)
    if not huge_pos then pos = pos + gettoalign(pos, h, opt, size) end
    if huge_pos or size > ld or pos > ld - size then
      argerror("unpack", 2, "data string too short")
    end
    if opt == "b" or opt == "B" or opt == "h" or opt == "H" or opt == "l" or opt == "L"
        or opt == "T" or opt == "i" or opt == "I" then
      n = n + 1
      results[n] = getinteger(data, pos + 1, h.little, opt == "b" or opt == "h" or opt == "l"
        or opt == "i", size)
    elseif opt == "x" then
      -- nothing
    elseif opt == "f" then
      local s = sub(data, pos + 1, pos + 4)
      if not h.little then s = reverse(s) end
      n = n + 1
      results[n] = float_from_bits(le32(s, 1))
    elseif opt == "d" then
      local s = sub(data, pos + 1, pos + 8)
      if not h.little then s = reverse(s) end
      n = n + 1
      results[n] = double_from_bits(le32(s, 5), le32(s, 1))
    elseif opt == "c" then
      if size == 0 then
        local prev = n > 0 and results[n]
        if not prev or tonumber(prev) == nil then fail("format 'c0' needs a previous size") end
        prev = tonumber(prev)
        results[n] = nil
        n = n - 1
        -- a size_t from a double, as x86-64 converts: truncated, negative ones and
        -- NaN huge, 2^64 and beyond 0
        if prev ~= prev or prev <= -1 then
          size = ld + 1
        elseif prev >= 18446744073709551616 then
          size = 0
        else
          size = prev < 0 and 0 or floor(prev)
        end
        if size > ld or pos > ld - size then argerror("unpack", 2, "data string too short") end
      end
      n = n + 1
      results[n] = sub(data, pos + 1, pos + size)
    elseif opt == "s" then
      local e = find(data, "\0", pos + 1, true)
      if not e then fail("unfinished string in data") end
      size = e - pos
      n = n + 1
      results[n] = sub(data, pos + 1, e - 1)
    else
      i = controloptions("unpack", opt, fmt, i, h)
    end
    pos = pos + size
  end
  n = n + 1
  results[n] = pos + 1
  return unpack(results, 1, n)
end)

cfunc(M, "size", function(...)
  local nargs = select("#", ...)
  local fmt = checkstring("size", 1, nargs, (...))
  local h = { little = true, align = 1 }
  local pos = 0
  local i, flen = 1, #fmt
  while i <= flen and byte(fmt, i) ~= 0 do
    local opt = sub(fmt, i, i)
    i = i + 1
    local size
    size, i = optsize(opt, fmt, i)
    pos = pos + gettoalign(pos, h, opt, size)
    if opt == "s" then
      argerror("size", 1, "option 's' has no fixed size")
    elseif opt == "c" and size == 0 then
      argerror("size", 1, "option 'c0' has no fixed size")
    end
    if not find(opt, "^%w") then i = controloptions("size", opt, fmt, i, h) end
    pos = pos + size
  end
  return pos
end)

return M
"""


def install(lua: Any) -> None:
    """Set the global ``struct`` of the lupa Lua 5.1 runtime ``lua``."""
    lua.globals()[b"struct"] = lua.execute(SOURCE, support(lua))
