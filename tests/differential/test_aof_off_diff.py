"""BGREWRITEAOF and DEBUG LOADAOF with ``appendonly no``, against redis-server 7.0.15.

Redis 7 rewrites the AOF while it is off: the new base goes into the
``appenddirname`` directory and the manifest lists that base alone; every
file listed before (an old base, the incremental files of an earlier
``appendonly yes``) is deleted.  DEBUG LOADAOF then loads that base.  Both
servers run in their own directories; the replies, the directory listings,
the manifests and INFO's AOF fields are compared.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.support.processes import ProcessGroup
from tests.support.rawclient import RawClient
from tests.support.redis_oracle import free_port

pytestmark = pytest.mark.differential

# INFO persistence's AOF fields both servers show with appendonly no (Redis
# 7.0 adds aof_rewrites_consecutive_failures and aof_last_cow_size).
AOF_FIELDS = ("aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled",
              "aof_last_bgrewrite_status", "aof_rewrites", "aof_last_write_status")


class Pair:
    """The same commands to a Tidelog and a redis-server with their own directories."""

    def __init__(self, processes: ProcessGroup) -> None:
        theirs = processes.redis()
        self.their_dir = theirs.dir
        self.our_dir = str(processes.workdir / "data")
        os.makedirs(self.our_dir)
        port = free_port()
        processes.tidelog(["--port", str(port), "--dir", self.our_dir, "--save", "",
                           "--appendonly", "no", "--enable-debug-command", "yes"], port=port)
        self.ours = RawClient(port)
        self.theirs = RawClient(theirs.port)

    def check(self, *argv: str) -> bytes:
        ours, theirs = self.ours.call(*argv), self.theirs.call(*argv)
        assert ours == theirs, f"\ncommand: {argv!r}\ntidelog: {ours!r}\nredis:   {theirs!r}"
        return ours

    def aof_info(self, client: RawClient) -> dict[str, str]:
        text = client.call("INFO", "persistence").decode()
        fields = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
        return {name: fields[name] for name in AOF_FIELDS}

    def wait_rewrites(self) -> None:
        for client in (self.ours, self.theirs):
            deadline = time.monotonic() + 30
            while self.aof_info(client)["aof_rewrite_in_progress"] != "0":
                assert time.monotonic() < deadline, "the AOF rewrite did not finish"
                time.sleep(0.05)

    def check_info(self) -> dict[str, str]:
        ours = self.aof_info(self.ours)
        assert ours == self.aof_info(self.theirs)
        return ours

    def check_files(self) -> dict[str, str]:
        """The AOF directory's listing and manifest are the same on both."""
        found = []
        for base in (self.our_dir, self.their_dir):
            directory = os.path.join(base, "appendonlydir")
            names = sorted(os.listdir(directory))
            manifests = {name: open(os.path.join(directory, name)).read()
                         for name in names if name.endswith(".manifest")}
            found.append((names, manifests))
        assert found[0] == found[1]
        return found[0][1]

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()


@pytest.fixture
def pair(processes):
    p = Pair(processes)
    yield p
    p.close()


def test_bgrewriteaof_while_off_writes_a_lone_base(pair):
    pair.check("SET", "a", "1")
    assert pair.check("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
    pair.wait_rewrites()
    manifests = pair.check_files()
    assert manifests == {"appendonly.aof.manifest":
                         "file appendonly.aof.1.base.rdb seq 1 type b\n"}
    assert pair.check_info()["aof_rewrites"] == "1"
    # A second rewrite replaces the first base.
    pair.check("SET", "b", "2")
    pair.check("BGREWRITEAOF")
    pair.wait_rewrites()
    assert pair.check_files() == {"appendonly.aof.manifest":
                                  "file appendonly.aof.2.base.rdb seq 2 type b\n"}
    info = pair.check_info()
    assert (info["aof_enabled"], info["aof_rewrites"]) == ("0", "2")


def test_debug_loadaof_while_off_loads_the_rewritten_base(pair):
    pair.check("SET", "a", "1")
    pair.check("SET", "gone", "x")
    pair.check("BGREWRITEAOF")
    pair.wait_rewrites()
    pair.check("SET", "b", "2")  # after the rewrite: in no file
    pair.check("DEL", "gone")
    assert pair.check("DEBUG", "LOADAOF") == b"+OK\r\n"
    assert pair.check("MGET", "a", "b", "gone") == b"*3\r\n$1\r\n1\r\n$-1\r\n$1\r\nx\r\n"
    pair.check("DBSIZE")


def test_rewrite_after_turning_the_aof_off_drops_its_files(pair):
    pair.check("SET", "a", "1")
    pair.check("BGREWRITEAOF")
    pair.wait_rewrites()
    pair.check("CONFIG", "SET", "appendonly", "yes")
    pair.wait_rewrites()
    pair.check("SET", "c", "3")
    assert pair.check_files() == {"appendonly.aof.manifest":
                                  "file appendonly.aof.2.base.rdb seq 2 type b\n"
                                  "file appendonly.aof.1.incr.aof seq 1 type i\n"}
    pair.check("CONFIG", "SET", "appendonly", "no")
    info = pair.check_info()  # the counters outlive the AOF being on
    assert (info["aof_enabled"], info["aof_rewrites"]) == ("0", "2")
    pair.check("SET", "d", "4")
    pair.check("BGREWRITEAOF")
    pair.wait_rewrites()
    assert pair.check_files() == {"appendonly.aof.manifest":
                                  "file appendonly.aof.3.base.rdb seq 3 type b\n"}
    assert pair.check_info()["aof_rewrites"] == "3"
    pair.check("DEBUG", "LOADAOF")
    pair.check("MGET", "a", "c", "d")
