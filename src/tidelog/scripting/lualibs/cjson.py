"""``cjson``: Redis's JSON library (lua-cjson 2.1.0), in Lua.

Encoding writes numbers with ``%.14g`` (``encode_number_precision``), escapes
``/`` and control characters, writes a table as an array when its keys are
1..n (holes as ``null``, "excessively sparse" ones refused or written as objects),
else as an object, and an empty table as ``{}``.  Decoding accepts what strtod
accepts for numbers (``decode_invalid_numbers``), gives ``cjson.null`` for
``null`` and UTF-8 for ``\\u`` escapes; errors carry Redis's texts and
character positions.  ``cjson.new()`` makes an instance with settings of its own.
"""

from __future__ import annotations

from typing import Any

from ._support import support

SOURCE = r"""
local S = ...
local cfunc, fail, argerror = S.cfunc, S.fail, S.argerror
local checkinteger, checkstring = S.checkinteger, S.checkstring
local type, next, rawget, rawset, tonumber, select = type, next, rawget, rawset, tonumber, select
local floor, huge = math.floor, math.huge
local format, byte, char, sub, find, lower, gsub =
    string.format, string.byte, string.char, string.sub, string.find, string.lower, string.gsub
local concat = table.concat

-- cjson.null: Redis's is a NULL light userdata ("userdata: (nil)")
local null = newproxy(true)
do
  local mt = getmetatable(null)
  mt.__tostring = function() return "userdata: (nil)" end
  mt.__metatable = false
end

local INT_MAX = 2147483647
-- the C functions' Lua stack holds at most this many slots (LUAI_MAXCSTACK); deep
-- nesting is refused when it would need more, as lua_checkstack refuses it there
local MAXCSTACK = 8000

local escapes = {}
for i = 0, 31 do escapes[char(i)] = format("\\u%04x", i) end
escapes["\b"] = "\\b"; escapes["\t"] = "\\t"; escapes["\n"] = "\\n"
escapes["\f"] = "\\f"; escapes["\r"] = "\\r"
escapes['"'] = '\\"'; escapes["\\"] = "\\\\"; escapes["/"] = "\\/"
escapes["\127"] = "\\u007f"

local function quote(s)
  return '"' .. gsub(s, '[%c"\\/]', escapes) .. '"'
end

local function number(cfg, x)
  if x ~= x or x == huge or x == -huge then
    local mode = cfg.invalid_numbers
    if mode == 0 then
      fail("Cannot serialise number: must not be NaN or Inf")
    elseif mode == 2 then
      return "null"
    elseif x ~= x then
      return "nan"
    end
  end
  return format(cfg.numfmt, x)
end

-- the length of t as an array, or -1 when it is to be an object
local function array_length(cfg, t)
  local max, items = 0, 0
  for k in next, t do
    if type(k) == "number" and k >= 1 and floor(k) == k then
      if k > max then
        -- the C code keeps the largest key in an int
        if k > INT_MAX then max = -2147483648 else max = k end
      end
      items = items + 1
    else
      return -1
    end
  end
  local ratio = cfg.sparse_ratio
  if ratio > 0 and max > items * ratio and max > cfg.sparse_safe then
    if cfg.sparse_convert == 0 then
      fail("Cannot serialise table: excessively sparse array")
    end
    return -1
  end
  return max
end

local encode_value

-- top: the stack slots the C encoder would use with t on top (an array element
-- costs one more, an object member two: key and value)
local function encode_table(cfg, t, depth, buf, n, top)
  depth = depth + 1
  if depth > cfg.encode_max_depth or top + 3 > MAXCSTACK then
    fail(format("Cannot serialise, excessive nesting (%d)", depth))
  end
  local len = array_length(cfg, t)
  if len > 0 then
    n = n + 1; buf[n] = "["
    for i = 1, len do
      if i > 1 then n = n + 1; buf[n] = "," end
      n = encode_value(cfg, rawget(t, i), depth, buf, n, top + 1)
    end
    n = n + 1; buf[n] = "]"
    return n
  end
  n = n + 1; buf[n] = "{"
  local first = true
  for k, v in next, t do
    if first then first = false else n = n + 1; buf[n] = "," end
    local kt = type(k)
    if kt == "string" then
      n = n + 1; buf[n] = quote(k)
    elseif kt == "number" then
      n = n + 1; buf[n] = '"' .. number(cfg, k) .. '"'
    else
      fail("Cannot serialise " .. kt .. ": table key must be a number or string")
    end
    n = n + 1; buf[n] = ":"
    n = encode_value(cfg, v, depth, buf, n, top + 2)
  end
  n = n + 1; buf[n] = "}"
  return n
end

encode_value = function(cfg, v, depth, buf, n, top)
  local t = type(v)
  n = n + 1
  if t == "string" then
    buf[n] = quote(v)
  elseif t == "number" then
    buf[n] = number(cfg, v)
  elseif t == "boolean" then
    buf[n] = v and "true" or "false"
  elseif t == "nil" or v == null then
    buf[n] = "null"
  elseif t == "table" then
    return encode_table(cfg, v, depth, buf, n - 1, top)
  else
    fail("Cannot serialise " .. t .. ": type not supported")
  end
  return n
end

-- decoding ---------------------------------------------------------------

local unescape = {
  [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [102] = "\f",
  [110] = "\n", [114] = "\r", [116] = "\t",
}

local function utf8(cp)
  if cp < 0x80 then return char(cp) end
  if cp < 0x800 then
    return char(0xC0 + floor(cp / 64), 0x80 + cp % 64)
  end
  if cp < 0x10000 then
    return char(0xE0 + floor(cp / 4096), 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return char(0xF0 + floor(cp / 262144), 0x80 + floor(cp / 4096) % 64,
              0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
end

local function hex4(s, p)
  local h = sub(s, p, p + 3)
  if find(h, "^%x%x%x%x$") then return tonumber(h, 16) end
  return nil
end

-- the prefix of s at p that C's strtod reads: its value and the position after it
local function strtod(s, p)
  local q = p
  local c = byte(s, q)
  if c == 43 or c == 45 then q = q + 1 end
  local word = lower(sub(s, q, q + 7))
  local e
  if sub(word, 1, 3) == "inf" then
    e = (word == "infinity") and q + 8 or q + 3
  elseif sub(word, 1, 3) == "nan" then
    e = q + 3
    local _, close = find(s, "^%([%w_]*%)", e)
    if close then e = close + 1 end
  elseif sub(word, 1, 2) == "0x" and (find(s, "^%x", q + 2) or find(s, "^%.%x", q + 2)) then
    local _, last = find(s, "^%x*%.?%x*", q + 2)
    e = last + 1
    local _, x = find(s, "^[pP][+-]?%d+", e)
    if x then e = x + 1 end
  else
    local _, last = find(s, "^%d*%.?%d*", q)
    if not find(sub(s, q, last), "%d") then return nil end
    e = last + 1
    local _, x = find(s, "^[eE][+-]?%d+", e)
    if x then e = x + 1 end
  end
  return tonumber(sub(s, p, e - 1)), e
end

-- the checks of strict JSON numbers that strtod does not make
local function invalid_number(s, p)
  local c = byte(s, p)
  if c == 43 then return true end
  if c == 45 then p = p + 1; c = byte(s, p) end
  if c == 48 then
    local c2 = byte(s, p + 1)
    return c2 ~= nil and (c2 == 120 or c2 == 88 or (c2 >= 48 and c2 <= 57))
  elseif c == nil or c <= 57 then
    return false
  end
  local w = lower(sub(s, p, p + 2))
  return w == "inf" or w == "nan"
end

local PUNCT = {
  [123] = "T_OBJ_BEGIN", [125] = "T_OBJ_END", [91] = "T_ARR_BEGIN",
  [93] = "T_ARR_END", [58] = "T_COLON", [44] = "T_COMMA",
}

-- one decode: s (cut at its first NUL byte) and a position
local function decoder(cfg, s)
  local pos = 1
  local len = #s

  local function string_token(start)
    local p = pos + 1
    local q = find(s, '["\\]', p)
    if q and byte(s, q) == 34 then
      pos = q + 1
      return "T_STRING", sub(s, p, q - 1), start
    end
    local parts, np = {}, 0
    while true do
      local q = find(s, '["\\]', p)
      if not q then
        pos = len + 1
        return "T_ERROR", "unexpected end of string", len + 1
      end
      if q > p then np = np + 1; parts[np] = sub(s, p, q - 1) end
      if byte(s, q) == 34 then
        pos = q + 1
        return "T_STRING", concat(parts), start
      end
      local e = byte(s, q + 1)
      if e == 117 then
        local cp = hex4(s, q + 2)
        local size = 6
        if cp and cp >= 0xD800 and cp <= 0xDFFF then
          if cp >= 0xDC00 or sub(s, q + 6, q + 7) ~= "\\u" then
            cp = nil
          else
            local low = hex4(s, q + 8)
            if low and low >= 0xDC00 and low <= 0xDFFF then
              cp = (cp - 0xD800) * 1024 + (low - 0xDC00) + 0x10000
              size = 12
            else
              cp = nil
            end
          end
        end
        if not cp then
          pos = q
          return "T_ERROR", "invalid unicode escape code", q
        end
        np = np + 1; parts[np] = utf8(cp)
        p = q + size
      else
        local r = e and unescape[e]
        if not r then
          pos = q
          return "T_ERROR", "invalid escape code", q
        end
        np = np + 1; parts[np] = r
        p = q + 2
      end
    end
  end

  -- characters after a run of digits that may continue a number for strtod
  local CONTINUES = { [46] = true, [101] = true, [69] = true, [120] = true, [88] = true }

  local function number_token(start)
    -- plain integers and decimals first (strtod reads them as tonumber does)
    local _, last = find(s, "^-?%d+", pos)
    if last then
      local c = byte(s, last + 1)
      if c == 46 then
        local _, frac = find(s, "^%d+", last + 2)
        if frac then
          local c2 = byte(s, frac + 1)
          if c2 ~= 101 and c2 ~= 69 then
            last = frac
            c = nil
          end
        end
      end
      if not (c and CONTINUES[c]) then
        local x = tonumber(sub(s, pos, last))
        pos = last + 1
        return "T_NUMBER", x, start
      end
    end
    local x, e = strtod(s, pos)
    if not x then return "T_ERROR", "invalid number", start end
    pos = e
    return "T_NUMBER", x, start
  end

  local function next_token()
    local c = byte(s, pos)
    if c == 32 or c == 9 or c == 10 or c == 13 then
      pos = find(s, "[^ \t\n\r]", pos) or len + 1
      c = byte(s, pos)
    end
    local start = pos
    if not c then return "T_END", nil, start end
    local p = PUNCT[c]
    if p then
      pos = pos + 1
      return p, nil, start
    end
    if c == 34 then return string_token(start) end
    if c == 45 or (c >= 48 and c <= 57) then
      if cfg.decode_invalid_numbers == 0 and invalid_number(s, pos) then
        return "T_ERROR", "invalid number", start
      end
      return number_token(start)
    end
    if sub(s, pos, pos + 3) == "true" then
      pos = pos + 4
      return "T_BOOLEAN", true, start
    elseif sub(s, pos, pos + 4) == "false" then
      pos = pos + 5
      return "T_BOOLEAN", false, start
    elseif sub(s, pos, pos + 3) == "null" then
      pos = pos + 4
      return "T_NULL", nil, start
    end
    if cfg.decode_invalid_numbers ~= 0 and invalid_number(s, pos) then
      return number_token(start)
    end
    return "T_ERROR", "invalid token", start
  end

  local function parse_error(expected, tt, tv, at)
    local found = tt == "T_ERROR" and tv or tt
    fail(format("Expected %s but found %s at character %d", expected, found, at))
  end

  local parse_value

  -- top: the stack slots the C decoder uses when it starts the structure; it wants
  -- room for 3 more in an object, 2 in an array
  local function descend(depth, top, room)
    depth = depth + 1
    if depth > cfg.decode_max_depth or top + room > MAXCSTACK then
      fail(format("Found too many nested data structures (%d) at character %d", depth, pos - 1))
    end
    return depth
  end

  local function parse_object(depth, top)
    depth = descend(depth, top, 3)
    local t = {}
    local tt, tv, at = next_token()
    if tt == "T_OBJ_END" then return t end
    while true do
      if tt ~= "T_STRING" then parse_error("object key string", tt, tv, at) end
      local key = tv
      tt, tv, at = next_token()
      if tt ~= "T_COLON" then parse_error("colon", tt, tv, at) end
      rawset(t, key, parse_value(depth, top + 2, next_token()))
      tt, tv, at = next_token()
      if tt == "T_OBJ_END" then return t end
      if tt ~= "T_COMMA" then parse_error("comma or object end", tt, tv, at) end
      tt, tv, at = next_token()
    end
  end

  local function parse_array(depth, top)
    depth = descend(depth, top, 2)
    local t = {}
    local tt, tv, at = next_token()
    if tt == "T_ARR_END" then return t end
    local i = 1
    while true do
      rawset(t, i, parse_value(depth, top + 1, tt, tv, at))
      i = i + 1
      tt, tv, at = next_token()
      if tt == "T_ARR_END" then return t end
      if tt ~= "T_COMMA" then parse_error("comma or array end", tt, tv, at) end
      tt, tv, at = next_token()
    end
  end

  parse_value = function(depth, top, tt, tv, at)
    if tt == "T_STRING" or tt == "T_NUMBER" or tt == "T_BOOLEAN" then return tv end
    if tt == "T_NULL" then return null end
    if tt == "T_OBJ_BEGIN" then return parse_object(depth, top) end
    if tt == "T_ARR_BEGIN" then return parse_array(depth, top) end
    parse_error("value", tt, tv, at)
  end

  local value = parse_value(0, 1, next_token())
  local tt, tv, at = next_token()
  if tt ~= "T_END" then parse_error("the end", tt, tv, at) end
  return value
end

-- settings ------------------------------------------------------------------

local BOOL_OPTIONS = { "off", "on" }
local INVALID_OPTIONS = { "off", "on", "null" }

local function arg_init(fname, nmax, n)
  if n > nmax then argerror(fname, nmax + 1, "found too many arguments") end
end

-- json_enum_option: a boolean or one of the option names; answers the setting
local function enum_option(fname, cfg, field, options, narg, v)
  if v ~= nil then
    if type(v) == "boolean" then
      cfg[field] = v and 1 or 0
    else
      local name = checkstring(fname, narg, narg, v)
      local found
      for i = 1, #options do
        if options[i] == name then found = i - 1 end
      end
      if not found then argerror(fname, narg, "invalid option '" .. name .. "'") end
      cfg[field] = found
    end
  end
  local value = cfg[field]
  if value < 2 then return value == 1 end
  return options[value + 1]
end

-- json_integer_option (its range error names argument 1 whatever the argument)
local function integer_option(fname, cfg, field, lo, hi, narg, v)
  if v ~= nil then
    local x = checkinteger(fname, narg, narg, v)
    if x < lo or x > hi then
      argerror(fname, 1, format("expected integer between %d and %d", lo, hi))
    end
    cfg[field] = x
  end
  return cfg[field]
end

local function new()
  local cfg = {
    sparse_convert = 0, sparse_ratio = 2, sparse_safe = 10,
    encode_max_depth = 1000, decode_max_depth = 1000,
    invalid_numbers = 0, decode_invalid_numbers = 1,
    keep_buffer = 1, precision = 14, numfmt = "%.14g",
  }
  local M = {}

  cfunc(M, "encode", function(...)
    if select("#", ...) ~= 1 then argerror("encode", 1, "expected 1 argument") end
    local buf = {}
    local n = encode_value(cfg, (...), 0, buf, 0, 1)
    return concat(buf, "", 1, n)
  end)

  cfunc(M, "decode", function(...)
    local n = select("#", ...)
    if n ~= 1 then argerror("decode", 1, "expected 1 argument") end
    local s = checkstring("decode", 1, n, (...))
    if #s >= 2 and (byte(s, 1) == 0 or byte(s, 2) == 0) then
      fail("JSON parser does not support UTF-16 or UTF-32")
    end
    local z = find(s, "\0", 1, true)
    if z then s = sub(s, 1, z - 1) end
    return decoder(cfg, s)
  end)

  cfunc(M, "encode_sparse_array", function(...)
    local n = select("#", ...)
    arg_init("encode_sparse_array", 3, n)
    local convert, ratio, safe = ...
    return enum_option("encode_sparse_array", cfg, "sparse_convert", BOOL_OPTIONS, 1, convert),
      integer_option("encode_sparse_array", cfg, "sparse_ratio", 0, INT_MAX, 2, ratio),
      integer_option("encode_sparse_array", cfg, "sparse_safe", 0, INT_MAX, 3, safe)
  end)

  local function int_setting(fname, field, lo, hi, after)
    cfunc(M, fname, function(...)
      arg_init(fname, 1, select("#", ...))
      local v = integer_option(fname, cfg, field, lo, hi, 1, (...))
      if after then after() end
      return v
    end)
  end
  local function enum_setting(fname, field, options)
    cfunc(M, fname, function(...)
      arg_init(fname, 1, select("#", ...))
      return enum_option(fname, cfg, field, options, 1, (...))
    end)
  end

  int_setting("encode_max_depth", "encode_max_depth", 1, INT_MAX)
  int_setting("decode_max_depth", "decode_max_depth", 1, INT_MAX)
  int_setting("encode_number_precision", "precision", 1, 14, function()
    cfg.numfmt = "%." .. cfg.precision .. "g"
  end)
  enum_setting("encode_keep_buffer", "keep_buffer", BOOL_OPTIONS)
  enum_setting("encode_invalid_numbers", "invalid_numbers", INVALID_OPTIONS)
  enum_setting("decode_invalid_numbers", "decode_invalid_numbers", BOOL_OPTIONS)

  cfunc(M, "new", function()
    return new()
  end)
  M.null = null
  M._NAME = "cjson"
  M._VERSION = "2.1.0"
  return M
end

return new()
"""


def install(lua: Any) -> None:
    """Set the global ``cjson`` of the lupa Lua 5.1 runtime ``lua``."""
    lua.globals()[b"cjson"] = lua.execute(SOURCE, support(lua))
