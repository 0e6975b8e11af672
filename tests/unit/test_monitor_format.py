"""MONITOR's argument escaping (Redis's sdscatrepr) and credential redaction."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.engine import monitor_args, repr_arg


def _unescape(text: bytes) -> bytes:
    """Read a quoted MONITOR argument back (the inverse of repr_arg)."""
    assert text[:1] == b'"' and text[-1:] == b'"'
    body, out, i = text[1:-1], bytearray(), 0
    simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("a"): 7, ord("b"): 8,
              ord('"'): 34, ord("\\"): 92}
    while i < len(body):
        c = body[i]
        if c != 0x5C:
            assert 0x20 <= c <= 0x7E and c != 0x22
            out.append(c)
            i += 1
        elif body[i + 1] == ord("x"):
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        else:
            out.append(simple[body[i + 1]])
            i += 2
    return bytes(out)


def test_escapes():
    assert repr_arg(b"") == b'""'
    assert repr_arg(b"plain text") == b'"plain text"'
    assert repr_arg(b'say "hi"\\') == b'"say \\"hi\\"\\\\"'
    assert repr_arg(b"\n\r\t\x07\x08") == b'"\\n\\r\\t\\a\\b"'
    assert repr_arg(b"\x00\x01\x1f\x7f\x80\xff") == b'"\\x00\\x01\\x1f\\x7f\\x80\\xff"'
    assert repr_arg("é".encode()) == b'"\\xc3\\xa9"'


@settings(max_examples=200)
@given(st.binary(max_size=40))
def test_escape_round_trip(arg):
    shown = repr_arg(arg)
    assert _unescape(shown) == arg
    assert all(0x20 <= c <= 0x7E for c in shown)


def test_redaction():
    assert monitor_args([b"AUTH", b"pw"]) == [b"AUTH", b"(redacted)"]
    assert monitor_args([b"auth", b"u", b"pw"]) == [b"auth", b"(redacted)", b"(redacted)"]
    assert monitor_args([b"HELLO", b"3", b"SETNAME", b"n", b"auth", b"u", b"p"]) == \
        [b"HELLO", b"3", b"SETNAME", b"n", b"auth", b"(redacted)", b"(redacted)"]
    assert monitor_args([b"HELLO", b"3"]) == [b"HELLO", b"3"]
    argv = [b"SET", b"auth", b"x"]
    assert monitor_args(argv) is argv


def test_feed_monitors_lines():
    """The hook scripts use: ``lua`` in place of the address; a Unix socket
    client shows as ``unix:<path>``; nothing is built without monitors."""
    import re

    from tidelog.engine import Engine

    engine = Engine()
    seen: list[bytes] = []
    watcher = engine.new_client(addr="127.0.0.1:5000")
    watcher.send = seen.append
    caller = engine.new_client(addr="127.0.0.1:6000")
    local = engine.new_client(addr="/tmp/tidelog.sock:0")
    engine.feed_monitors(caller, 0, [b"SET", b"k", b"v"])
    assert seen == []
    engine.add_monitor(watcher)
    engine.feed_monitors(caller, 2, [b"SET", b"k", b"v"], from_script=True)
    engine.feed_monitors(local, 0, [b"PING"])
    engine.feed_monitors(caller, 1, [b"GET", b"k"])
    masked = [re.sub(rb"^\+\d+\.\d{6} ", b"+T ", line) for line in seen]
    assert masked == [b'+T [2 lua] "SET" "k" "v"\r\n', b'+T [0 unix:/tmp/tidelog.sock] "PING"\r\n',
                      b'+T [1 127.0.0.1:6000] "GET" "k"\r\n']
    engine.remove_monitor(watcher)
    assert engine.monitors == [] and not watcher.monitor


def test_monitors_see_commands_in_order_and_scripts_first():
    """Through the engine: admin commands hidden, EXEC after the commands it
    ran, a refused (arity) command not shown."""
    import re

    from tidelog.engine import Engine

    engine = Engine()
    seen: list[bytes] = []
    watcher = engine.new_client(addr="127.0.0.1:5000")
    watcher.send = seen.append
    client = engine.new_client(addr="127.0.0.1:6000")
    engine.execute(watcher, [b"MONITOR"])
    for argv in ([b"SET", b"a", b"1"], [b"CONFIG", b"GET", b"hz"], [b"GET"], [b"MULTI"],
                 [b"INCR", b"a"], [b"EXEC"], [b"SLOWLOG", b"LEN"]):
        engine.execute(client, argv)
    names = [re.search(rb'\] "([A-Z]+)"', line).group(1) for line in seen]
    assert names == [b"SET", b"MULTI", b"INCR", b"EXEC"]


def test_monitors_see_a_script_before_its_commands():
    """EVAL and FCALL (flagged skip_monitor, as in Redis) are shown, first;
    then the commands they ran, as ``lua`` (Redis's introspection.tcl)."""
    import re

    from tidelog.engine import Engine

    engine = Engine()
    seen: list[bytes] = []
    watcher = engine.new_client(addr="127.0.0.1:5000")
    watcher.send = seen.append
    client = engine.new_client(addr="127.0.0.1:6000")
    engine.execute(client, [b"FUNCTION", b"LOAD", b"#!lua name=test\nredis.register_function("
                            b"'test', function() return redis.call('set', 'foo', 'bar') end)"])
    engine.execute(watcher, [b"MONITOR"])
    engine.execute(client, [b"EVAL", b"redis.call('set',KEYS[1],ARGV[1])", b"1", b"foo", b"bar"])
    engine.execute(client, [b"FCALL", b"test", b"0"])
    masked = [re.sub(rb"^\+\d+\.\d{6} \[0 [^\]]+\] ", b"", line) for line in seen]
    assert masked == [b'"EVAL" "redis.call(\'set\',KEYS[1],ARGV[1])" "1" "foo" "bar"\r\n',
                      b'"set" "foo" "bar"\r\n', b'"FCALL" "test" "0"\r\n', b'"set" "foo" "bar"\r\n']
