"""Differential tests of the replication commands a client can send to a
primary that has no replica: REPLCONF's argument checks, WAIT and ROLE,
byte for byte with redis-server 7.0.15.  (The replication stream itself is
tested with a real redis-server replica in
tests/integration/test_replication.py.)"""

from __future__ import annotations

import pytest

from tests.support.rawclient import encode_command

pytestmark = pytest.mark.differential


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(differ, request):
    if request.param == 3:
        differ.resp3()
    return differ


@pytest.mark.parametrize("argv", [
    ["REPLCONF"],                                   # no option: OK
    ["REPLCONF", "listening-port"],                 # a pair short
    ["REPLCONF", "listening-port", "6380"],
    ["REPLCONF", "listening-port", "x"],
    ["REPLCONF", "capa", "eof", "capa", "psync2"],
    ["REPLCONF", "ip-address", "10.0.0.1"],
    ["REPLCONF", "nonsense", "1"],
    ["REPLCONF", "capa", "eof", "nonsense", "1"],
    ["REPLCONF", "ACK", "10"],                      # from a non-replica: no reply
    ["REPLCONF", "GETACK", "*"],                    # on a primary: no reply
])
def test_replconf(d, argv) -> None:
    both = [replies_then_pong(client, argv) for client in (d.ours, d.theirs)]
    assert both[0] == both[1], f"{argv}: tidelog {both[0]!r}, redis {both[1]!r}"


def replies_then_pong(client, argv) -> list[bytes]:
    """The replies to ``argv`` (perhaps none), read up to the PONG of a PING
    sent right after it."""
    client.send_raw(encode_command(argv) + encode_command(["PING"]))
    replies = []
    while (reply := client.read_reply()) != b"+PONG\r\n":
        replies.append(reply)
        assert len(replies) < 5, replies
    return replies


@pytest.mark.parametrize("argv", [
    ["WAIT", "0", "0"],
    ["WAIT", "1", "10"],           # no replica: the count (0) at the timeout
    ["WAIT", "x", "0"],
    ["WAIT", "0", "x"],
    ["WAIT", "0", "-1"],
    ["WAIT", "0", "1.5"],
    ["WAIT", "0"],
    ["ROLE"],
    ["ROLE", "x"],
])
def test_wait_and_role(d, argv) -> None:
    d.check(*argv)


def test_wait_inside_exec_answers_at_once(d) -> None:
    d.check_all([["MULTI"], ["SET", "k", "v"], ["WAIT", "1", "0"], ["EXEC"]])


@pytest.mark.parametrize("name", ["role", "replconf", "psync", "sync"])
def test_command_info(d, name) -> None:
    d.check("COMMAND", "INFO", name)


def test_command_info_wait_is_redis_8s(d) -> None:
    """Redis 7.4 let WAIT run in scripts and flags it blocking (categories
    @slow @blocking @connection: https://redis.io/docs/latest/commands/wait/)."""
    set_ = b"~" if d.ours.call("HELLO").startswith(b"%") else b"*"
    d.check_newer("COMMAND", "INFO", "wait", ours=(
        b"*1\r\n*10\r\n$4\r\nwait\r\n:3\r\n" + set_ + b"1\r\n+blocking\r\n:0\r\n:0\r\n:0\r\n"
        + set_ + b"3\r\n+@slow\r\n+@blocking\r\n+@connection\r\n" + set_
        + b"2\r\n$25\r\nrequest_policy:all_shards\r\n$23\r\nresponse_policy:agg_min\r\n"
        + set_ + b"0\r\n" + set_ + b"0\r\n"))
