"""CLIENT PAUSE: a client whose command is held counts in INFO's
blocked_clients, as in Redis (its pause.tcl waits on that count); reads are
not held by a WRITE pause, nor are scripts and functions flagged no-writes
(Redis's pause.tcl "Test RO scripts are not blocked by pause RO")."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.engine import POSTPONED


def test_postponed_clients_count_as_blocked():
    h = Harness()
    writer, reader = h.new_client(), h.new_client()
    h.ok("CLIENT", "PAUSE", "60000", "WRITE")
    assert h("GET", "foo", client=reader) is None
    assert h.engine.blocked_clients == 0
    assert h("SET", "foo", "bar", client=writer) is POSTPONED
    assert h.engine.blocked_clients == 1
    info = h.ok("INFO", "clients")
    assert b"blocked_clients:1\r\n" in (info if isinstance(info, bytes) else info.text)
    h.ok("CLIENT", "UNPAUSE")
    assert h.engine.blocked_clients == 0


LIB = ("#!lua name=f1\nredis.register_function{function_name='f1', "
       "callback=function() return 'hello' end, flags={'no-writes'}}\n"
       "redis.register_function('f2', function() return 'writer' end)")


def test_no_writes_scripts_run_under_a_write_pause():
    h = Harness()
    c = h.new_client()
    h.ok("FUNCTION", "LOAD", LIB)
    ro = "#!lua flags=no-writes\nreturn 'unique script'"
    sha = h.ok("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 2")
    h.ok("CLIENT", "PAUSE", "60000", "WRITE")
    assert h("EVAL", ro, "0", client=c) == b"unique script"
    assert h("EVAL", ro, "0", client=c) == b"unique script"
    assert h("EVALSHA", sha, "0", client=c) == 2
    assert h("FCALL", "f1", "0", client=c) == b"hello"
    assert h("FCALL", "F1", "0", client=c) == b"hello"
    h.ok("MULTI", client=c)
    h.ok("EVAL", "#!lua flags=no-writes\nreturn 12", "0", client=c)
    assert h("EXEC", client=c) == [12]
    assert h.engine.blocked_clients == 0
    # may write: held
    for argv in (["EVAL", "return 1", "0"], ["FCALL", "f2", "0"], ["EVALSHA", "0" * 40, "0"],
                 ["EVAL", "#!lua\nreturn 1", "0"]):
        assert h(*argv, client=h.new_client()) is POSTPONED
    assert h.engine.blocked_clients == 4
    h.ok("CLIENT", "UNPAUSE")

