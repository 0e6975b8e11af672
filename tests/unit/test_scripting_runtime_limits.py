"""The Lua runtime at its limits, without a network: calls with about 8,000
arguments, the tail-call patch that keeps the script's line in errors, the
read-back of pre-encoded replies, and big numbers both ways."""

from __future__ import annotations

import lupa.lua51 as lua51
import pytest

from tidelog.resp.replies import NULL_ARRAY, ErrorReply, Map, RawReply, SetReply, SimpleString, Verbatim
from tidelog.scripting.runtime import LuaRuntime, decode_reply
from tidelog.scripting.tailcalls import OP_CALL, OP_TAILCALL, without_tail_calls


class Recorder:
    """An executor answering each call with its argument count."""

    def __init__(self) -> None:
        self.argv: list[list[bytes]] = []

    def __call__(self, argv, raise_errors):
        self.argv.append(argv)
        return True, len(argv)


@pytest.fixture
def rt():
    rec = Recorder()
    runtime = LuaRuntime(rec)
    runtime.recorder = rec
    return runtime


def run(rt, body: bytes):
    ok, value = rt.run(rt.compile(body), [], [])
    return rt.to_reply(value) if ok else value


FILL = b"local a = {} for i=1,%d do a[i]=%s end\n"


@pytest.mark.parametrize("n", [1, 7896, 7897, 7900, 7997, 7998, 7999])
def test_calls_take_as_many_arguments_as_unpack_gives(rt, n):
    # Redis's Lua takes redis.call('lpush', 'l', unpack(a)) with #a = 7999
    # (unpack may give 8,000 values less its own arguments)
    assert run(rt, FILL % (n, b"'v'") + b"return redis.call('lpush', 'l', unpack(a))") == n + 2
    assert rt.recorder.argv[-1] == [b"lpush", b"l"] + [b"v"] * n


def test_literal_arguments_add_to_unpacked_ones(rt):
    body = FILL % (7999, b"7") + b"return redis.pcall('x', 1, 2.5, 'y', unpack(a))"
    assert run(rt, body) == 8003
    assert rt.recorder.argv[-1][:4] == [b"x", b"1", b"2.5", b"y"]


def test_one_more_value_than_unpack_gives_is_its_error(rt):
    message, source, line, _ = run(rt, FILL % (8000, b"1") + b"return redis.call('x', unpack(a))")
    assert (message, source, line) == (b"ERR user_script:2: too many results to unpack",
                                       b"@user_script", 2)


def test_a_bad_argument_among_many_is_refused(rt):
    body = FILL % (7999, b"1") + b"\nreturn redis.call('x', nil, unpack(a))"
    message, source, line, _ = run(rt, body)
    assert (message, line) == (b"ERR Lua redis lib command arguments must be strings or integers", 3)


@pytest.mark.parametrize("body, line", [
    (b"\n\nreturn redis.call()", 3),
    (b"return redis.call()", 1),
    (b"local function f()\n  return redis.call()\nend\nreturn f()", 2),
    (b"\nreturn unpack({}, 1, 2147483647)", 2),
    (b"\n\n\nreturn redis.sha1hex()", 4),
])
def test_errors_in_tail_calls_name_the_scripts_line(rt, body, line):
    message, source, at, _ = run(rt, body)
    assert (source, at) == (b"@user_script", line)


def test_tail_recursion_still_runs(rt):
    body = b"local function f(n) if n == 0 then return 'done' end return f(n - 1) end return f(5000)"
    assert run(rt, body) == b"done"


def test_the_redis_functions_are_lua_functions(rt):
    assert run(rt, b"return {type(redis.call), type(redis.pcall), type(redis.log)}") == \
        [b"function"] * 3
    assert run(rt, b"return tostring(redis.call):sub(1, 10)") == b"function: "


# -- the dump patch ---------------------------------------------------------------------------
def _dump(source: str) -> bytes:
    lua = lua51.LuaRuntime(encoding=None)
    return lua.eval("string.dump(assert(loadstring(...)))", source.encode())


def test_tail_calls_become_calls_in_every_function():
    source = ("local function f(x) return g(x) end\n"
              "local function h() return function() return f(1) end end\n"
              "return f(h())")
    dump = _dump(source)
    patched = without_tail_calls(dump)
    assert len(patched) == len(dump)
    changed = [i for i in range(len(dump)) if dump[i] != patched[i]]
    assert len(changed) == 3  # one instruction byte per `return f(...)`
    for i in changed:
        assert dump[i] & 0x3F == OP_TAILCALL and patched[i] & 0x3F == OP_CALL
        assert dump[i] & 0xC0 == patched[i] & 0xC0  # the operand bits stay
    lua = lua51.LuaRuntime(encoding=None)
    fn = lua.eval("function(d) return assert(loadstring(d)) end")(patched)
    assert fn is not None


def test_a_chunk_without_tail_calls_is_unchanged():
    dump = _dump("local t = {1, 'two', 3.5, true, nil}\nfor i = 1, 3 do t[i] = i end\nreturn t")
    assert without_tail_calls(dump) == dump


@pytest.mark.parametrize("data", [b"", b"\x1bLuaR\x00\x01\x04\x08\x04\x08\x00", b"return 1"])
def test_what_is_no_lua_51_dump_is_refused(data):
    with pytest.raises(ValueError):
        without_tail_calls(data)


def test_trailing_bytes_are_refused():
    with pytest.raises(ValueError):
        without_tail_calls(_dump("return 1") + b"x")


# -- replies ----------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, value", [
    (b"+OK\r\n", SimpleString(b"OK")), (b"-ERR x\r\n", ErrorReply(b"ERR x")), (b":12\r\n", 12),
    (b"(123456789012345678901234\r\n", 123456789012345678901234), (b",3.5\r\n", 3.5),
    (b"#t\r\n", True), (b"#f\r\n", False), (b"_\r\n", None), (b"$-1\r\n", None),
    (b"*-1\r\n", NULL_ARRAY), (b"$3\r\na\r\n\r\n", b"a\r\n"), (b"*2\r\n:1\r\n$1\r\nx\r\n", [1, b"x"]),
    (b"%1\r\n$1\r\nk\r\n:2\r\n", Map([(b"k", 2)])), (b"~1\r\n:1\r\n", SetReply([1])),
    (b"=7\r\ntxt:abc\r\n", Verbatim(b"abc", b"txt")), (b">2\r\n$1\r\na\r\n:1\r\n", [b"a", 1]),
    (b"|1\r\n$3\r\nkey\r\n:9\r\n$4\r\nreal\r\n", b"real"),
])
def test_pre_encoded_replies_read_back(raw, value):
    assert decode_reply(raw) == value


@pytest.mark.parametrize("raw", [b"", b"?x\r\n", b":1\r\n:2\r\n", b"$5\r\nab\r\n"])
def test_bad_pre_encoded_replies_are_refused(raw):
    with pytest.raises((ValueError, IndexError)):
        decode_reply(raw)


def test_big_integers_and_raw_replies_reach_scripts(rt):
    big = 1234567999999999999999999999999999999
    for reply, resp, shown in [
        (big, 2, b"1234567999999999999999999999999999999"),
        (big, 3, b"big:1234567999999999999999999999999999999"),
        (RawReply(b"|1\r\n$1\r\nk\r\n:1\r\n$4\r\nreal\r\n"), 3, b"real"),
        (RawReply(b"(42\r\n"), 3, b"42"),
    ]:
        rt.executor = lambda argv, raise_errors, r=reply: (True, rt.to_lua(r))
        body = (b"redis.setresp(%d) local r = redis.call('x') "
                b"if type(r) == 'table' then return 'big:' .. r.big_number end "
                b"return tostring(r)" % resp)
        assert run(rt, body) == shown


def test_big_number_replies_follow_the_clients_protocol(rt):
    fn = rt.compile(b"return {big_number='12\\r\\n34'}")
    for client_resp, reply in ((2, b"12  34"), (3, RawReply(b"(12  34\r\n"))):
        rt.client_resp = client_resp
        ok, value = rt.run(fn, [], [])
        assert ok and rt.to_reply(value) == reply


# -- through the engine -----------------------------------------------------------------------
def _stats(h):
    calls = {name: (calls, rejected, failed)
             for name, calls, _, rejected, failed in h.engine.command_stats()}
    return dict(h.engine.error_counts), h.engine.stats["total_error_replies"], calls


@pytest.mark.parametrize("script, errors, calls", [
    ("return redis.call('select', 99)", {"ERR": 1}, {"select": (1, 0, 1), "eval": (1, 0, 1)}),
    ("return redis.pcall('select', 99)", {"ERR": 1}, {"select": (1, 0, 1), "eval": (1, 0, 1)}),
    ("local t = redis.pcall('select', 99) return 1", {"ERR": 1},
     {"select": (1, 0, 1), "eval": (1, 0, 0)}),
    ("local t = redis.pcall('select', 99) error(t)", {"ERR": 1},
     {"select": (1, 0, 1), "eval": (1, 0, 1)}),
    ("redis.call('incr')", {"ERR": 1}, {"incr": (0, 1, 0), "eval": (1, 0, 1)}),
    ("return redis.error_reply('MY_CODE x')", {"MY_CODE": 1}, {"eval": (1, 0, 1)}),
    ("return {err='FOO bar'}", {"FOO": 1}, {"eval": (1, 0, 1)}),
    ("error('x')", {"ERR": 1}, {"eval": (1, 0, 1)}),
])
def test_a_scripts_errors_count_once(script, errors, calls):
    from tests.support.engine_harness import Harness

    h = Harness()
    h.ok("CONFIG", "RESETSTAT")
    h("EVAL", script, 0)
    counted, total, by_command = _stats(h)
    assert counted == errors and total == 1
    assert {name: by_command[name] for name in calls} == calls


def test_shebang_scripts_are_refused_past_maxmemory_unless_flagged():
    from tests.support.engine_harness import Harness

    h = Harness()
    h.ok("CONFIG", "SET", "maxmemory", "1")
    assert h.err("EVAL", "#!lua\nreturn 1", 0).startswith(b"OOM ")
    assert h.err("EVAL", "#!lua flags=allow-stale\nreturn 1", 0).startswith(b"OOM ")
    assert h("EVAL", "#!lua flags=no-writes\nreturn 1", 0) == 1
    assert h("EVAL", "return 1", 0) == 1  # no shebang: its commands are checked one by one
    h.ok("CONFIG", "SET", "maxmemory", "0")
    assert h("EVAL", "#!lua\nreturn 1", 0) == 1


def test_debug_set_disable_deny_scripts():
    from tests.support.engine_harness import Harness

    h = Harness()
    script = "return redis.call('debug', 'protocol', 'true')"
    assert h.err("EVAL", script, 0).startswith(b"ERR This Redis command is not allowed from script")
    h.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    assert h("EVAL", script, 0) == 1
    h.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
    assert h.err("EVAL", script, 0).startswith(b"ERR This Redis command is not allowed from script")


@pytest.mark.parametrize("command", ["redis.call('publish', 'c', 'm')", "redis.call('pfcount', 'h')",
                                     "redis.call('set', 'k', 'v')"])
def test_read_only_scripts_refuse_what_may_replicate(command):
    from tests.support.engine_harness import Harness

    h = Harness()
    refused = b"ERR Write commands are not allowed from read-only scripts."
    assert h.err("EVAL", f"#!lua flags=no-writes\nreturn {command}", 0).startswith(refused)
    assert h.err("EVAL_RO", f"return {command}", 0).startswith(refused)
    assert not isinstance(h("EVAL", f"return {command}", 0), ErrorReply)  # writes may


def test_redis_log_reads_its_level_and_parts_as_redis_does():
    logged = []
    rt = LuaRuntime(lambda argv, r: (True, 1), logger=lambda level, text: logged.append((level, text)))
    assert run(rt, b"redis.log('2', 'a', 1.5, true, {}, 7, nil, 'z') return 1") == 1
    assert logged == [(2, b"a 1.5 7 z")]
    message = run(rt, b"return redis.log(4, 'x')")[0]
    assert message == b"ERR Invalid log level."
    assert run(rt, b"return redis.log('x', 'y')")[0] == b"ERR First argument must be a number (log level)."


@pytest.mark.parametrize("arg, resp", [(b"'3'", 3), (b"2.9", 2), (b"' 0x3 '", 3), (b"3", 3)])
def test_setresp_reads_numbers_as_lua_tonumber(rt, arg, resp):
    assert run(rt, b"redis.setresp(%s) return 1" % arg) == 1
    assert rt.resp == resp


@pytest.mark.parametrize("arg", [b"'x'", b"true", b"4", b"1.5e10", b"{}"])
def test_setresp_refuses_what_is_not_2_or_3(rt, arg):
    assert run(rt, b"redis.setresp(%s) return 1" % arg)[0] == b"ERR RESP version must be 2 or 3."
