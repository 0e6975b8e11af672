"""The commands whose work is done above the engine (SAVE, WAIT, DUMP ...)
are in the command layer's table: what a bare engine knows does not depend
on which other packages were imported, and those commands answer on a bare
engine (what a server without replicas answers) or refuse clearly."""

from __future__ import annotations

import subprocess
import sys

from tests.support.engine_harness import Harness
from tidelog import errors

COUNT_THEN_SERVER = """
from tidelog.engine import Engine
from tidelog.resp import encode
engine = Engine()
client = engine.new_client()
before = engine.execute(client, [b"COMMAND", b"COUNT"])
import tidelog.persistence, tidelog.replication, tidelog.server.main  # noqa
after = engine.execute(client, [b"COMMAND", b"COUNT"])
print(before, after)
"""


def test_command_count_does_not_depend_on_imports():
    out = subprocess.run([sys.executable, "-c", COUNT_THEN_SERVER], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == out[1] and int(out[0]) > 200


def test_commands_of_the_upper_layers_are_known_to_a_bare_engine():
    h = Harness()
    for name in ("SAVE", "BGSAVE", "LASTSAVE", "BGREWRITEAOF", "DUMP", "RESTORE", "MIGRATE",
                 "WAIT", "WAITAOF", "REPLCONF", "PSYNC", "SYNC", "REPLICAOF", "SLAVEOF",
                 "ROLE", "FAILOVER"):
        info = h("COMMAND", "INFO", name)
        assert info[0] is not None, name


def test_a_bare_engine_dumps_and_restores():
    h = Harness()
    h.ok("SET", "k", "v")
    payload = h("DUMP", "k")
    h.ok("RESTORE", "k2", 0, payload)
    assert h("GET", "k2") == b"v"
    h.ok("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
    dumped = h("FUNCTION", "DUMP")
    h.ok("FUNCTION", "FLUSH")
    h.ok("FUNCTION", "RESTORE", dumped)
    assert h("FCALL", "f", 0) == 1


def test_a_bare_engine_answers_as_a_server_without_replicas_or_refuses():
    h = Harness()
    assert h("ROLE") == [b"master", 0, []]
    assert h.err("FAILOVER") == b"ERR FAILOVER requires connected replicas."
    assert h.err("FAILOVER", "ABORT") == b"ERR No failover in progress."
    assert h("LASTSAVE") == h.engine.started_ms // 1000
    assert h.err("SAVE") == errors.NO_PERSISTENCE
    assert h.err("DEBUG", "RELOAD") == errors.NO_PERSISTENCE
    assert h.err("WAIT", 0, 0) == errors.NO_REPLICATION
    assert h.err("REPLCONF", "listening-port", 1) == errors.NO_REPLICATION


def test_with_the_layers_attached_they_do_the_work(tmp_path):
    h = Harness(layers=True)
    h.engine.config.set("dir", str(tmp_path))
    h.ok("SET", "k", "v")
    h.ok("SAVE")
    assert (tmp_path / "dump.rdb").exists()
    assert h("WAIT", 0, 0) == 0
    assert h.ok("REPLCONF", "listening-port", 6380)
