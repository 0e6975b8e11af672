"""DEBUG RELOAD's NOFLUSH and MERGE, as Redis's functions.tcl uses them:
NOFLUSH keeps what is there and fails on a function library (or key) the
snapshot also holds; with MERGE the snapshot's replaces it.  (Redis stops
the whole server on a duplicate key; Tidelog refuses the reload and changes
nothing.)"""

from __future__ import annotations

import pytest
import redis


def lib(name: str, body: str = "return 'hello'") -> str:
    return f"#!lua name={name}\nredis.register_function('{name}', function() {body} end)"


@pytest.mark.parametrize("protocol", [2, 3])
def test_noflush_and_merge(tidelog_srv, protocol):
    with redis.Redis(port=tidelog_srv.port, protocol=protocol) as r:
        r.function_load(lib("test"))
        with pytest.raises(redis.ResponseError, match="Error trying to load the RDB"):
            r.execute_command("DEBUG", "RELOAD", "NOFLUSH")
        assert r.execute_command("DEBUG", "RELOAD", "NOFLUSH", "MERGE")
        assert [x[b"library_name"] if isinstance(x, dict) else x[1]
                for x in r.function_list()] == [b"test"]
        # what was added since the save is kept beside what is reloaded
        r.function_delete("test")
        r.set("x", "1")
        r.function_load(lib("test1"))
        assert r.execute_command("DEBUG", "RELOAD")
        r.function_load(lib("test2"))
        r.set("y", "2")
        assert r.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")
        assert r.fcall("test1", 0) == b"hello" and r.fcall("test2", 0) == b"hello"
        assert r.mget("x", "y") == [b"1", b"2"]


def test_noflush_with_a_key_already_there_changes_nothing(tidelog_srv):
    with redis.Redis(port=tidelog_srv.port) as r:
        r.set("x", "saved")
        assert r.execute_command("DEBUG", "RELOAD")
        r.set("x", "newer")
        r.set("z", "3")
        with pytest.raises(redis.ResponseError, match="Error trying to load the RDB"):
            r.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH")
        assert r.mget("x", "z") == [b"newer", b"3"]
        assert r.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")
        assert r.mget("x", "z") == [b"saved", b"3"]
        with pytest.raises(redis.ResponseError, match="only supports the MERGE, NOFLUSH and NOSAVE"):
            r.execute_command("DEBUG", "RELOAD", "FOO")
