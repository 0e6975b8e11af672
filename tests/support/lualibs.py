"""Running one Lua expression in redis-server's Lua and in ours, with a printable answer.

``script(exprs)`` is a script that calls each expression under pcall and answers,
for each, one string: ``ok`` or ``err`` and each value (strings ``%q``-quoted, numbers with
17 digits, tables with their keys sorted, ``cjson.null`` as ``NULL``), so the two
answers compare byte for byte.  Our side loads it with the chunk name Redis gives
scripts (``user_script``), so error positions read the same.
"""

from __future__ import annotations

from typing import Any

DUMP = (
    "local function dump(v, depth) local t = type(v) "
    "if t == 'string' then return string.format('%q', v) "
    "elseif t == 'number' then return string.format('%.17g', v) "
    "elseif t == 'table' then if depth > 20 then return '{...}' end "
    "local keys = {} for k in pairs(v) do keys[#keys + 1] = k end "
    "table.sort(keys, function(a, b) local ta, tb = type(a), type(b) "
    "if ta ~= tb then return ta < tb end if ta == 'boolean' then return tostring(a) < tostring(b) end "
    "return a < b end) "
    "local out = {} for i = 1, #keys do "
    "out[i] = dump(keys[i], depth + 1) .. '=' .. dump(v[keys[i]], depth + 1) end "
    "return '{' .. table.concat(out, ',') .. '}' "
    "elseif v == cjson.null then return 'NULL' "
    "elseif t == 'function' then return 'function' "
    "else return tostring(v) end end "
)


CAPTURE = (
    "local function cap(...) local n = select('#', ...) local out = {(...) and 'ok' or 'err'} "
    "for i = 2, n do out[i] = dump((select(i, ...)), 0) end return table.concat(out, ' ') end "
)


def script(exprs: list[str]) -> str:
    """A script answering, for each of ``exprs``, its results (or its error) as one string."""
    parts = [DUMP, CAPTURE, "local R = {} "]
    for expr in exprs:
        parts.append("R[#R + 1] = cap(pcall(function() return " + expr + "\nend)) ")
    parts.append("return R")
    return "".join(parts)


def runtime() -> Any:
    """A lupa Lua 5.1 runtime with the four libraries, and its script runner."""
    import lupa.lua51

    from tidelog.scripting.lualibs import INSTALLERS

    lua = lupa.lua51.LuaRuntime(encoding=None)
    for install in INSTALLERS:
        install(lua)
    runner = lua.eval(b"function(code) return assert(loadstring(code, '@user_script'))() end")

    def run(code: str) -> list[bytes]:
        return list(runner(code.encode()).values())

    return lua, run
