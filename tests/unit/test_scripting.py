"""The Lua runtime (conversions both ways, the sandbox) and scripts run
through the engine (effects, SELECT, MULTI), without a network."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.engine_harness import Harness
from tidelog.errors import CommandError
from tidelog.resp.replies import NULL_ARRAY, ErrorReply, Map, SetReply, SimpleString, Verbatim
from tidelog.scripting.runtime import LuaRuntime
from tidelog.scripting.scripts import parse_shebang


class Calls:
    """An executor recording argv and answering a fixed reply."""

    def __init__(self, reply=b"v"):
        self.argv: list[list[bytes]] = []
        self.reply = reply
        self.rt: LuaRuntime | None = None

    def __call__(self, argv, raise_errors):
        self.argv.append(argv)
        if isinstance(self.reply, ErrorReply):
            return False, self.reply.message
        return True, self.rt.to_lua(self.reply)


@pytest.fixture(scope="module")
def calls():
    c = Calls()
    c.rt = LuaRuntime(c)
    return c


def run(calls, body: bytes, keys=(), args=()):
    rt = calls.rt
    ok, value = rt.run(rt.compile(body), list(keys), list(args))
    return rt.to_reply(value) if ok else value


@pytest.mark.parametrize("body, reply", [
    (b"return 1", 1), (b"return 3.99", 3), (b"return -2.7", -2), (b"return 'x'", b"x"),
    (b"return true", 1), (b"return false", None), (b"return nil", None),
    (b"return {1, 2, nil, 4}", [1, 2]), (b"return {a=1}", []),
    (b"return {ok='fine'}", SimpleString(b"fine")), (b"return {err='E x'}", ErrorReply(b"E x")),
    (b"return {double=1.5}", 1.5), (b"return {map={a=1}}", Map([(b"a", 1)])),
    (b"return {set={a=true}}", SetReply([b"a"])),
    (b"return {verbatim_string={format='txt', string='s'}}", Verbatim(b"s", b"txt")),
    (b"return 2^63", -(2 ** 63)), (b"return 0/0", -(2 ** 63)),
    (b"return redis.error_reply('-X y')", ErrorReply(b"X y")),
    (b"return redis.status_reply('S')", SimpleString(b"S")),
    (b"return {1, {2, {'z'}}}", [1, [2, [b"z"]]]),
])
def test_lua_to_reply(calls, body, reply):
    assert run(calls, body) == reply


def test_booleans_follow_setresp(calls):
    assert run(calls, b"redis.setresp(3) return true") is True
    assert run(calls, b"redis.setresp(3) return false") is False
    assert run(calls, b"return true") == 1  # each run starts in RESP2


@pytest.mark.parametrize("reply, resp, lua_type, shown", [
    (b"abc", 2, "string", b"abc"), (7, 2, "number", b"7"), (None, 2, "boolean", b"false"),
    (NULL_ARRAY, 2, "boolean", b"false"), (None, 3, "nil", b"nil"),
    (SimpleString(b"OK"), 2, "table", b"OK"), ([b"a", 1], 2, "table", b"a1"),
    (1.5, 2, "string", b"1.5"), (1.5, 3, "table", b"1.5"), (True, 2, "number", b"1"),
    (True, 3, "boolean", b"true"), (Map([(b"k", b"v")]), 2, "table", b"kv"),
    (Map([(b"k", b"v")]), 3, "table", b"v"), (SetReply([b"m"]), 3, "table", b"true"),
    (Verbatim(b"t"), 2, "string", b"t"), (Verbatim(b"t"), 3, "table", b"t"),
])
def test_reply_to_lua(calls, reply, resp, lua_type, shown):
    calls.reply = reply
    show = (b"local r = redis.call('x') "
            b"if type(r) ~= 'table' then return tostring(r) end "
            b"if r.ok then return r.ok end if r.double then return tostring(r.double) end "
            b"if r.map then return r.map.k end if r.set then return tostring(r.set.m) end "
            b"if r.verbatim_string then return r.verbatim_string.string end "
            b"local s = '' for _, v in ipairs(r) do s = s .. tostring(v) end return s")
    assert run(calls, b"redis.setresp(%d) return type(redis.call('x'))" % resp) == lua_type.encode()
    assert run(calls, b"redis.setresp(%d) " % resp + show) == shown
    calls.reply = b"v"


def test_errors_from_calls(calls):
    calls.reply = ErrorReply(b"ERR bad thing")
    message, source, line, counted = run(calls, b"\n\nreturn redis.call('x')")
    assert (message, source, line) == (b"ERR bad thing", b"@user_script", 3)
    assert counted  # a command's error: counted where it arose
    assert run(calls, b"local ok, e = pcall(redis.call, 'x') return e") == b"ERR bad thing"
    assert run(calls, b"return redis.pcall('x')") == ErrorReply(b"ERR bad thing")
    calls.reply = b"v"


def test_arguments(calls):
    calls.argv.clear()
    run(calls, b"return redis.call('set', KEYS[1], ARGV[1], 1.5, 0.1, 10, 1e20)", [b"k"], [b"a"])
    assert calls.argv == [[b"set", b"k", b"a", b"1.5", b"0.10000000000000001", b"10", b"1e+20"]]
    assert run(calls, b"return redis.call()")[0] == \
        b"ERR Please specify at least one argument for this redis lib call"
    assert run(calls, b"return redis.call('x', {})")[0] == \
        b"ERR Lua redis lib command arguments must be strings or integers"


NOGLOBAL = b"ERR user_script:1: Script attempted to access nonexistent global variable "


@pytest.mark.parametrize("body, message", [
    (b"x = 1", b"ERR user_script:1: Attempt to modify a readonly table"),
    (b"return nope", NOGLOBAL + b"'nope'"),
    (b"redis.call = nil", b"ERR user_script:1: Attempt to modify a readonly table"),
    (b"math.pi = 3", b"ERR user_script:1: Attempt to modify a readonly table"),
    (b"rawset(_G, 'x', 1)", b"ERR Attempt to modify a readonly table"),
    (b"return io.open", NOGLOBAL + b"'io'"),
    (b"return debug.sethook", NOGLOBAL + b"'debug'"),
    (b"return require('x')", NOGLOBAL + b"'require'"),
    (b"return loadfile", NOGLOBAL + b"'loadfile'"),
    (b"return python", NOGLOBAL + b"'python'"),
    (b"return os.execute", None),
])
def test_sandbox(calls, body, message):
    result = run(calls, body)
    if message is None:
        assert result is None  # os holds clock only
    else:
        assert result[0] == message


def test_os_clock_only(calls):
    assert run(calls, b"return type(os.clock())") == b"number"
    assert run(calls, b"local t = {} for k in pairs(os) do t[#t + 1] = k end return t") == [b"clock"]


def test_no_escape_through_loadstring(calls):
    assert run(calls, b"return type(loadstring('x = 1'))") == b"function"
    message = run(calls, b"local f = loadstring('x = 1') f()")[0]
    assert b"Attempt to modify a readonly table" in message
    assert b"nonexistent global variable 'io'" in run(calls, b"return loadstring('return io')()")[0]
    assert b"readonly" in run(calls, b"getmetatable('').__index = nil")[0]
    assert run(calls, b"return ('abc'):upper()") == b"ABC"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=20), st.integers(-(2 ** 53), 2 ** 53)), max_size=8))
def test_arrays_round_trip(values):
    c = Calls(values)
    c.rt = LuaRuntime(c)
    assert run(c, b"return redis.call('x')") == values


def test_shebang():
    assert parse_shebang(b"return 1") == (b"return 1", frozenset())
    assert parse_shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1") == \
        (b"\nreturn 1", frozenset({b"no-writes", b"allow-oom"}))
    with pytest.raises(CommandError):
        parse_shebang(b"#!lua flags=bad\n")
    with pytest.raises(CommandError):
        parse_shebang(b"#!python\n")


# -- through the engine -----------------------------------------------------------------------
def test_effects_wrapped_in_multi():
    h = Harness()
    assert h.ok("EVAL", "redis.call('set', 'a', '1') redis.call('incr', 'b') "
                        "return redis.call('get', 'a')", 0) == b"1"
    assert h.effects[-1] == [(0, [b"MULTI"]), (0, [b"set", b"a", b"1"]), (0, [b"incr", b"b"]),
                             (0, [b"EXEC"])]
    h.effects.clear()
    h.ok("EVAL", "return redis.call('incr', 'b')", 0)
    assert h.effects == [[(0, [b"incr", b"b"])]]
    h.effects.clear()
    h.ok("EVAL", "return redis.call('get', 'b')", 0)
    assert h.effects == []


def test_eval_script_load_and_flush_never_propagate():
    # as redis-server 7.0.15 (its multi.tcl "MULTI propagation of SCRIPT LOAD/FLUSH")
    h = Harness()
    h.ok("SCRIPT", "LOAD", "return 1")
    assert h.take_effects() == []
    h.ok("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0)
    h.ok("SCRIPT", "FLUSH")
    assert h.take_effects() == []
    h.ok("MULTI")
    h.ok("SCRIPT", "LOAD", "return 2")
    h.ok("SET", "foo", "bar")
    h.ok("EXEC")
    assert h.take_effects() == [[b"SET", b"foo", b"bar"]]


def test_select_in_script_is_the_scripts_own():
    h = Harness()
    h.ok("EVAL", "redis.call('select', 3) return redis.call('set', 'k', 'v')", 0)
    assert h.client.db == 0
    assert h.effects == [[(3, [b"set", b"k", b"v"])]]  # the AOF writes SELECT on a db change
    assert h("GET", "k") is None
    h.ok("SELECT", "3")
    assert h("GET", "k") == b"v"


def test_eval_inside_multi_joins_the_transaction():
    h = Harness()
    h.ok("MULTI")
    h.ok("EVAL", "redis.call('incr', 'x') return redis.call('incr', 'x')", 0)
    h.ok("INCR", "x")
    assert h.ok("EXEC") == [2, 3]
    assert h.effects[-1] == [(0, [b"MULTI"]), (0, [b"incr", b"x"]), (0, [b"incr", b"x"]),
                             (0, [b"INCR", b"x"]), (0, [b"EXEC"])]


def test_inner_commands_counted():
    h = Harness()
    h.ok("EVAL", "redis.call('incr', 'x') return redis.call('incr', 'x')", 0)
    assert h.engine.command_calls["incr"] == 2
    assert h.engine.command_calls["eval"] == 1
    assert h.engine.internal_errors == 0


def test_function_commands_propagate_and_fcall_propagates_effects():
    h = Harness()
    code = ("#!lua name=lib\nredis.register_function('f', function(keys, args) "
            "redis.call('SET', keys[1], args[1]) return redis.call('INCR', keys[2]) end)")
    assert h.ok("FUNCTION", "LOAD", code) == b"lib"
    assert h.take_effects() == [[b"FUNCTION", b"LOAD", code.encode()]]
    assert h.ok("FCALL", "f", 2, "a", "n", "v") == 1
    assert h.effects == [[(0, [b"MULTI"]), (0, [b"SET", b"a", b"v"]), (0, [b"INCR", b"n"]),
                          (0, [b"EXEC"])]]
    h.effects.clear()
    h.ok("FUNCTION", "DELETE", "lib")
    h.ok("FUNCTION", "FLUSH")
    assert h.take_effects() == [[b"FUNCTION", b"DELETE", b"lib"], [b"FUNCTION", b"FLUSH"]]
    assert h.err("FCALL", "f", 0) == b"ERR Function not found"


def test_function_load_replace_keeps_the_old_library_on_failure():
    h = Harness()
    h.ok("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
    assert h.err("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nreturn +").startswith(
        b"ERR Error compiling function")
    assert h.ok("FCALL", "f", 0) == 1
    h.ok("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('g', function() "
         "return 2 end)")
    assert h.err("FCALL", "f", 0) == b"ERR Function not found"
    assert h.ok("FCALL", "g", 0) == 2


def test_function_load_that_never_ends_times_out():
    h = Harness()
    message = h.err("FUNCTION", "LOAD", "#!lua name=spin\nwhile true do end")
    assert message.startswith(b"ERR Error registering functions: ERR FUNCTION LOAD timeout")
    assert h.ok("EVAL", "return 1", 0) == 1


@pytest.mark.parametrize("body", [b"while true do end",
                                  b"coroutine.wrap(function() while true do end end)()",
                                  b"local co = coroutine.create(function() while true do end end) "
                                  b"coroutine.resume(co) return 1",
                                  b"while true do pcall(function() while true do end end) end"])
def test_the_count_hook_stops_every_loop(body):
    checks = []

    def kill_check():
        checks.append(1)
        return b"ERR stop" if len(checks) > 3 else None

    rt = LuaRuntime(lambda argv, raise_errors: (True, b""), kill_check)
    ok, value = rt.run(rt.compile(body), [], [])
    assert len(checks) == 4
    assert not ok and value[0] == b"ERR stop"  # neither pcall nor resume catches it


@pytest.mark.parametrize("body", [
    b"return redis.call.__self__",                       # the Python objects behind redis.*
    b"return redis.call.__class__.__init__",
    b"return getmetatable(redis.call).__index(redis.call, '__self__')",
    b"return loadstring(string.dump(function() return 1 end))()",  # bytecode
    b"return load(string.dump(function() return 1 end))()",
])
def test_sandbox_escapes_are_closed(calls, body):
    result = run(calls, body)
    assert isinstance(result, tuple), result  # a script error, nothing reached


def test_binary_chunks_do_not_compile(calls):
    with pytest.raises(Exception, match="binary chunks"):
        calls.rt.compile(b"\x1bLuaQ")


def test_clients_blocked_on_a_key_a_script_fills_are_served_after_it():
    h = Harness()
    waiting = h.new_client()
    assert repr(h("BLPOP", "q", 0, client=waiting)) == "BLOCKED"
    assert h.ok("EVAL", "redis.call('RPUSH', 'q', 'a', 'b') return redis.call('LLEN', 'q')", 0) == 2
    assert waiting.inbox == [[b"q", b"a"]]
    assert h("LRANGE", "q", 0, -1) == [b"b"]


def test_extra_libraries_plug_in_read_only(monkeypatch):
    from tidelog.scripting import runtime

    monkeypatch.setattr(runtime, "LIBRARY_INSTALLERS",
                        [lambda lua: lua.execute("bit = {band = function(a, b) return 7 end}")])
    c = Calls()
    c.rt = LuaRuntime(c)
    assert run(c, b"return bit.band(1, 2)") == 7
    assert run(c, b"bit.band = nil")[0] == b"ERR user_script:1: Attempt to modify a readonly table"
