"""Scripts and functions flagged allow-oom write over maxmemory, as in Redis;
others get -OOM for their first denyoom command."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.resp.replies import OK


def test_allow_oom_function_writes_over_maxmemory():
    # Redis's functions.tcl "verify allow-omm allows running any command"
    h = Harness()
    h.ok("FUNCTION", "LOAD", "#!lua name=f1\nredis.register_function{function_name='f1', "
         "callback=function() return redis.call('set', 'x', '1') end, flags={'allow-oom'}}\n"
         "redis.register_function('f2', function() return redis.call('set', 'y', '1') end)")
    h.ok("CONFIG", "SET", "maxmemory", "1")
    assert h("FCALL", "f1", "1", "x") == OK
    assert h("GET", "x") == b"1"
    assert h.err("FCALL", "f2", "1", "y").startswith(b"OOM command not allowed")
    assert h("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'z', '1')", "1", "z") == OK
    h.ok("CONFIG", "SET", "maxmemory", "0")
