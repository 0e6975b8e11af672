"""MODULE, CLUSTER (cluster mode off), LOLWUT and DEBUG ERROR: raw replies
compared with redis-server 7.0.15.

MODULE needs ``enable-module-command yes`` on Redis (its default refuses
the command); the MODULE tests start their own redis-server with it.
Pages: https://redis.io/commands/module-load, https://redis.io/commands/lolwut."""

from __future__ import annotations

import pytest

from tests.support.processes import RedisServer
from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential


@pytest.fixture(scope="module")
def module_redis(oracle_server):
    srv = RedisServer("--enable-module-command", "yes")
    yield srv
    srv.stop()


def test_module_replies(tidelog, module_redis):
    with RawClient(tidelog.port) as ours, RawClient(module_redis.port) as theirs:
        for argv in (("MODULE", "LIST"), ("MODULE", "HELP"), ("MODULE", "UNLOAD", "x"),
                     ("MODULE", "UNLOAD"), ("MODULE", "UNLOAD", "a", "b"), ("MODULE", "LIST", "x"),
                     ("MODULE", "LOAD"), ("MODULE", "LOADEX"), ("MODULE",), ("MODULE", "nope")):
            assert ours.call(*argv) == theirs.call(*argv), argv
        for argv in (("MODULE", "LOAD", "/no/such.so"), ("MODULE", "LOADEX", "/no/such.so")):
            # Same prefix; Redis then points at its log, Tidelog says why.
            mine, redis_ = ours.call(*argv), theirs.call(*argv)
            assert redis_ == b"-ERR Error loading the extension. Please check the server logs.\r\n"
            assert mine == b"-ERR Error loading the extension. Tidelog does not load Redis modules\r\n"


CLUSTER_CALLS = [
    ["CLUSTER", "INFO"], ["CLUSTER", "HELP"], ["CLUSTER", "NODES"], ["CLUSTER", "SLOTS"],
    ["CLUSTER", "SHARDS"], ["CLUSTER", "MYID"], ["CLUSTER", "KEYSLOT", "k"],
    ["CLUSTER", "ADDSLOTS", "1", "2"], ["CLUSTER", "ADDSLOTSRANGE", "1", "5"],
    ["CLUSTER", "SETSLOT", "1", "STABLE"], ["CLUSTER", "RESET", "HARD"],
    ["CLUSTER", "GETKEYSINSLOT", "1", "1"], ["CLUSTER", "COUNTKEYSINSLOT", "1"],
    ["CLUSTER", "MEET", "127.0.0.1", "1"], ["CLUSTER", "FAILOVER", "FORCE"],
    ["CLUSTER", "LINKS"], ["CLUSTER", "REPLICAS", "x"], ["CLUSTER", "SLAVES", "x"],
    # arity and unknown subcommands come first
    ["CLUSTER"], ["CLUSTER", "KEYSLOT"], ["CLUSTER", "INFO", "x"], ["CLUSTER", "HELP", "x"],
    ["CLUSTER", "ADDSLOTS"], ["CLUSTER", "NOPE"], ["cluster", "Info"],
]


def test_cluster_replies(differ):
    differ.check_all(CLUSTER_CALLS)


def test_cluster_and_module_command_info(differ):
    for sub in ("info", "help", "addslots", "reset", "keyslot", "setslot", "nodes", "replicas",
                "bumpepoch", "count-failure-reports", "shards", "myid", "links"):
        differ.check("COMMAND", "INFO", f"cluster|{sub}")
    for sub in ("list", "help", "load", "loadex", "unload"):
        differ.check("COMMAND", "INFO", f"module|{sub}")
    differ.check("COMMAND", "INFO", "lolwut")


def test_debug_error(differ):
    differ.check_all([["DEBUG", "ERROR", "hello world"], ["DEBUG", "ERROR", "-WRONG x"],
                      ["DEBUG", "ERROR", "a\r\nb\nc"], ["DEBUG", "ERROR", ""],
                      ["DEBUG", "ERROR"], ["DEBUG", "ERROR", "a", "b"]])


def test_lolwut(differ):
    differ.normalise(rb"Redis ver\. [0-9.]+", b"Redis ver. X")
    differ.check_all([["LOLWUT", "VERSION", "1"], ["LOLWUT", "VERSION", "7"],
                      ["LOLWUT", "VERSION", "-3"], ["LOLWUT", "VERSION", "x"],
                      ["LOLWUT", "VERSION", "5", "x"], ["LOLWUT", "VERSION", "6", "1", "x"],
                      ["LOLWUT", "VERSION", "99999999999"], ["LOLWUT", "VERSION", "4", "x"]])
    differ.resp3()
    differ.check("LOLWUT", "VERSION", "2")


def _tail(reply: bytes, lines: int) -> bytes:
    return b"\n".join(reply.split(b"\n")[-lines - 1:])


def test_lolwut_art_ends_as_redis(differ):
    differ.normalise(rb"Redis ver\. [0-9.]+", b"Redis ver. X")
    for argv, lines in ((("LOLWUT", "VERSION", "5", "10", "2", "2"), 2),
                        (("LOLWUT", "VERSION", "5", "-4", "0", "900"), 2),
                        (("LOLWUT", "VERSION", "6", "4", "3"), 2)):
        ours, theirs = differ.ours.call(*argv), differ.theirs.call(*argv)
        assert differ._norm(_tail(ours, lines)) == differ._norm(_tail(theirs, lines)), argv
