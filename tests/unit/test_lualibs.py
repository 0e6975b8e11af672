"""cjson, cmsgpack, bit and struct in a lupa Lua 5.1 runtime: round trips and models.

The comparisons with redis-server are in tests/differential/test_lualibs_diff.py;
here: values survive encode/decode and pack/unpack (hypothesis), the IEEE 754
bits agree with Python's ``struct``, bit operations agree with integer
arithmetic, and the wrappers behave as C functions (errors name the caller's
line, even after a tail call, and a function works again after it failed).
"""

from __future__ import annotations

import math
import struct as pystruct

import lupa.lua51
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.lualibs import runtime

LUA, RUN = runtime()
SETTINGS = settings(max_examples=60, deadline=None)

EQUAL = LUA.eval(b"""
function(a, b)
  local function eq(x, y, depth)
    if type(x) ~= type(y) then return false end
    if type(x) ~= 'table' then return x == y end
    for k, v in pairs(x) do if not eq(v, y[k], depth + 1) then return false end end
    for k in pairs(y) do if x[k] == nil then return false end end
    return true
  end
  return eq(a, b, 0)
end
""")


def lua_string(data: bytes) -> str:
    return '"' + "".join("\\%d" % b for b in data) + '"'


def lua_number(x: float) -> str:
    if math.isinf(x):
        return "(1/0)" if x > 0 else "(-1/0)"
    return repr(float(x))


def lua_literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return lua_number(value)
    if isinstance(value, bytes):
        return lua_string(value)
    if isinstance(value, list):
        return "{" + ", ".join(lua_literal(v) for v in value) + "}"
    return "{" + ", ".join("[%s] = %s" % (lua_string(k), lua_literal(v)) for k, v in value.items()) + "}"


def one(expr: str):
    return RUN("return {%s}" % expr)[0]


def round_trips(expr_template: str, value) -> bool:
    literal = lua_literal(value)
    return bool(one("(function() local v = %s return (%s)(v) end)()" % (
        literal, "function(v) return EQ(v, %s) end" % (expr_template % "v"))))


LUA.globals()[b"EQ"] = EQUAL

# numbers cjson writes exactly with 14 significant digits
json_numbers = st.one_of(st.integers(-10**13, 10**13),
                         st.integers(-10**13, 10**13).map(lambda i: i / 1000))
json_values = st.recursive(
    st.one_of(st.booleans(), json_numbers, st.binary(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, min_size=1, max_size=5),
                            st.dictionaries(st.binary(max_size=8), inner, min_size=1, max_size=5)),
    max_leaves=20)

msgpack_numbers = st.one_of(st.integers(-2**63, 2**63 - 1).map(float),
                            st.floats(allow_nan=False), st.integers(-2**70, 2**70))
msgpack_values = st.recursive(
    st.one_of(st.booleans(), msgpack_numbers, st.binary(max_size=300)),
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.binary(max_size=8), inner, max_size=5)),
    max_leaves=20)


@SETTINGS
@given(json_values)
def test_cjson_decode_undoes_encode(value):
    assert round_trips("cjson.decode(cjson.encode(%s))", value)


@SETTINGS
@given(msgpack_values)
def test_cmsgpack_unpack_undoes_pack(value):
    assert round_trips("cmsgpack.unpack(cmsgpack.pack(%s))", value)


@SETTINGS
@given(st.lists(msgpack_values, min_size=1, max_size=4))
def test_cmsgpack_unpack_one_walks_a_stream(values):
    literal = ", ".join(lua_literal(v) for v in values)
    code = ("(function() local s = cmsgpack.pack(%s) local out, offset = {}, 0 "
            "while offset ~= -1 do local v offset, v = cmsgpack.unpack_one(s, offset) out[#out + 1] = v end "
            "return EQ(out, {%s}) end)()" % (literal, literal))
    assert one(code) is True


@SETTINGS
@given(st.floats(allow_nan=False, width=64))
def test_struct_double_bits_are_ieee_754(x):
    assert one("struct.pack('<d', %s)" % lua_number(x)) == pystruct.pack("<d", x)
    assert one("struct.pack('>d', %s)" % lua_number(x)) == pystruct.pack(">d", x)
    assert one("struct.unpack('<d', %s)" % lua_string(pystruct.pack("<d", x))) == x


@SETTINGS
@given(st.floats(allow_nan=False, width=64))
def test_struct_float_rounds_to_nearest_even(x):
    try:
        expected = pystruct.pack("<f", x)
    except OverflowError:  # Python refuses what C rounds to infinity
        expected = pystruct.pack("<f", math.copysign(math.inf, x))
    assert one("struct.pack('<f', %s)" % lua_number(x)) == expected
    assert one("struct.unpack('<f', %s)" % lua_string(expected)) == pystruct.unpack("<f", expected)[0]


INT_FORMATS = {"b": (1, True), "B": (1, False), "h": (2, True), "H": (2, False), "i": (4, True),
               "I": (4, False), "l": (8, True), "L": (8, False), "i3": (3, True), "I5": (5, False)}


@SETTINGS
@given(st.sampled_from(sorted(INT_FORMATS)), st.sampled_from("<>"), st.data())
def test_struct_integers_round_trip(fmt, order, data):
    size, signed = INT_FORMATS[fmt]
    lo, hi = (-(2 ** (8 * size - 1)), 2 ** (8 * size - 1) - 1) if signed else (0, 2 ** (8 * size) - 1)
    n = data.draw(st.integers(lo, min(hi, 2**53)).filter(lambda v: v >= -(2**53)))
    packed = one("struct.pack('%s%s', %d)" % (order, fmt, n))
    assert packed == n.to_bytes(size, "little" if order == "<" else "big", signed=signed)
    assert RUN("return {struct.unpack('%s%s', %s)}" % (order, fmt, lua_string(packed)))[:2] == [n, size + 1]


@SETTINGS
@given(st.binary(max_size=30).filter(lambda b: b"\0" not in b), st.binary(max_size=30),
       st.integers(-100, 100))
def test_struct_strings_round_trip(zstring, chars, n):
    fmt = "!4 s b c%d i" % len(chars) if chars else "!4 s b i"
    args = [lua_string(zstring), "7"] + ([lua_string(chars)] if chars else []) + [str(n)]
    code = "{struct.unpack('%s', struct.pack('%s', %s))}" % (fmt, fmt, ", ".join(args))
    values = RUN("return %s" % code)
    assert values[:-1] == [zstring, 7] + ([chars] if chars else []) + [n]


def model_tobit(x: float) -> int:
    n = round(x)  # Python rounds halves to even, as the FPU does
    n %= 2**32
    return n - 2**32 if n >= 2**31 else n


def signed(n: int) -> int:
    n %= 2**32
    return n - 2**32 if n >= 2**31 else n


words = st.integers(-(2**40), 2**40)


@SETTINGS
@given(words, words, st.integers(0, 40))
def test_bit_operations_match_integer_arithmetic(a, b, s):
    got = RUN("return {bit.tobit(%d), bit.band(%d, %d), bit.bor(%d, %d), bit.bxor(%d, %d), bit.bnot(%d), "
              "bit.lshift(%d, %d), bit.rshift(%d, %d), bit.arshift(%d, %d), bit.rol(%d, %d), "
              "bit.ror(%d, %d), bit.bswap(%d), bit.tohex(%d), bit.tohex(%d, -4)}"
              % (a, a, b, a, b, a, b, a, a, s, a, s, a, s, a, s, a, s, a, a, a))
    ua, ub, k = a % 2**32, b % 2**32, s % 32
    assert got == [
        signed(ua), signed(ua & ub), signed(ua | ub), signed(ua ^ ub), signed(~ua),
        signed(ua << k), signed(ua >> k), signed(signed(ua) >> k),
        signed((ua << k) | (ua >> (32 - k))), signed((ua >> k) | (ua << (32 - k))),
        signed(int.from_bytes(ua.to_bytes(4, "little"), "big")),
        b"%08x" % ua, b"%04X" % (ua & 0xFFFF),
    ]


@SETTINGS
@given(st.floats(-(2.0**50), 2.0**50))
def test_bit_tobit_rounds_halves_to_even(x):
    assert RUN("return {bit.tobit(%s)}" % lua_number(x)) == [model_tobit(x)]


def test_errors_name_the_callers_line_even_after_a_tail_call():
    code = "local ok, e = pcall(function()\n\n  return cjson.decode('[')\nend)\nreturn {e}"
    assert RUN(code) == [b"user_script:3: Expected value but found T_END at character 2"]
    code = "local ok, e = pcall(function()\n  local x = bit.band({})\n  return x\nend)\nreturn {e}"
    assert RUN(code) == [b"user_script:2: bad argument #1 to 'band' (number expected, got table)"]


def test_a_function_works_again_after_it_failed():
    code = ("local n = 0 for i = 1, 5 do if not pcall(cjson.decode, '{') then n = n + 1 end end "
            "return {n, cjson.decode('[7]')[1], type(cjson.decode)}")
    assert RUN(code) == [5, 7, b"function"]


def test_the_libraries_install_in_a_runtime_with_an_encoding():
    from tidelog.scripting.lualibs import INSTALLERS

    lua = lupa.lua51.LuaRuntime()
    for install in INSTALLERS:
        install(lua)
    assert lua.eval("cjson.encode({a = {1, 2}})") == '{"a":[1,2]}'
    assert lua.eval("bit.tohex(255, 2) .. struct.size('!4 b i') .. #cmsgpack.pack(1.5)") == "ff85"


@pytest.mark.parametrize("expr, expected", [
    ("cjson.encode({1, 'a/b', {x = false}, 0.1})", b'[1,"a\\/b",{"x":false},0.1]'),
    ("cjson.encode(2^53)", b"9.007199254741e+15"),
    ("cmsgpack.pack(1.5, -1, 2^32)", b"\xca\x3f\xc0\x00\x00\xff\xcf\x00\x00\x00\x01\x00\x00\x00\x00"),
    ("struct.pack('>!4 b i', 1, 2)", b"\x01\x00\x00\x00\x00\x00\x00\x02"),
    ("bit.tohex(bit.bnot(0), -8)", b"FFFFFFFF"),
])
def test_known_encodings(expr, expected):
    assert one(expr) == expected


def test_the_libraries_need_no_globals_once_installed():
    from tidelog.scripting.lualibs import INSTALLERS

    lua = lupa.lua51.LuaRuntime(encoding=None, register_eval=False, register_builtins=False)
    for install in INSTALLERS:
        install(lua)
    lua.execute(b"local keep = {cjson = 1, cmsgpack = 1, bit = 1, struct = 1, pcall = 1, select = 1} "
                b"local G = _G for k in pairs(G) do if not keep[k] then G[k] = nil end end")
    assert lua.eval(b"cjson.encode(cjson.decode('[1,{\"a\":null},\"\\\\u00e9\"]'))") == (
        b'[1,{"a":null},"\xc3\xa9"]')
    assert lua.eval(b"select(2, pcall(cjson.decode, '['))") == (
        b"Expected value but found T_END at character 2")
    assert lua.eval(b"select(2, pcall(cjson.encode_max_depth, 0))") == (
        b"bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)")
    assert lua.eval(b"cmsgpack.pack(select(2, cmsgpack.unpack_one(cmsgpack.pack({1, {a = 2.5}}, 'x'))))") == (
        b"\x92\x01\x81\xa1a\xca\x40\x20\x00\x00")
    assert lua.eval(b"struct.pack('<i d s c0 f', 7, 1.5, 'ab', 'cd', 2.5)") == (
        b"\x07\x00\x00\x00" + pystruct.pack("<d", 1.5) + b"ab\x00cd" + pystruct.pack("<f", 2.5))
    assert lua.eval(b"select('#', struct.unpack('>i c0', '\\0\\0\\0\\2ab'))") == 2
    assert lua.eval(b"struct.size('!4 b i') + bit.band(7, 3, 1) .. bit.tohex(255, -2)") == b"9FF"
