"""The operator's commands against redis-server: MONITOR lines, SLOWLOG,
LATENCY, CLIENT REPLY / PAUSE, CONFIG REWRITE and MEMORY replies.

Times, addresses and durations vary: they are masked before comparing."""

from __future__ import annotations

import re

import pytest

from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential

_LINE_HEAD = re.compile(rb"^\+\d+\.\d{6} \[(\d+) ([^\]]+)\] ")


def _monitor_lines(port: int, corpus: list[list[bytes | str]]) -> list[bytes]:
    """What a monitor sees while another client runs ``corpus`` (then
    ECHO END); each line's time masked and its address checked and masked."""
    watcher, worker = RawClient(port), RawClient(port)
    try:
        assert watcher.call("MONITOR") == b"+OK\r\n"
        addr = re.search(rb"addr=(\S+)", worker.call("CLIENT", "INFO")).group(1)
        for argv in corpus:
            worker.call(*argv)
        worker.call("ECHO", "END")
        lines = []
        while True:
            line = watcher.read_reply(timeout=5)
            head = _LINE_HEAD.match(line)
            assert head is not None, line
            if head.group(2) != b"lua":
                assert head.group(2) == addr, line
            masked = _LINE_HEAD.sub(rb"+<time> [\1 <addr>] ", line)
            lines.append(masked)
            if masked.endswith(b'"ECHO" "END"\r\n'):
                return lines
    finally:
        watcher.close()
        worker.close()


MONITOR_CORPUS: list[list[bytes | str]] = [
    ["SET", "k", b"a\nb\"\\\x01\x7f\xff\t\r\x07\x08 z"],
    ["get", "k"],
    ["SELECT", "3"],
    ["AUTH", "default", "secret"],
    ["AUTH", "secret"],
    ["HELLO", "2", "AUTH", "default", "secret"],
    ["HELLO", "2", "SETNAME", "me"],
    ["MULTI"], ["set", "x", "1"], ["incr", "x"], ["EXEC"],
    ["MULTI"], ["nosuch"], ["EXEC"],
    ["MULTI"], ["PING"], ["DISCARD"],
    ["CONFIG", "GET", "hz"],          # admin commands are not shown
    ["CLIENT", "LIST"], ["CLIENT", "ID"],
    ["ping", "a", "b"],               # an arity error is not shown
    ["lpush"], ["lpush", "l", "1"], ["lpush", "k", "x"],  # a WRONGTYPE one is
    ["BLPOP", "nothing", "0.01"],
    ["XADD", "s", "1-1", "f", "v"], ["XADD", "s", "2-1", "f", "v"],
    ["SELECT", "0"],
    ["INFO", "server"],
]


def _ports(differ) -> tuple[int, int]:
    return differ.ours.sock.getpeername()[1], differ.theirs.sock.getpeername()[1]


def test_monitor_lines(differ):
    ours_port, theirs_port = _ports(differ)
    ours = _monitor_lines(ours_port, MONITOR_CORPUS)
    theirs = _monitor_lines(theirs_port, MONITOR_CORPUS)
    assert ours == theirs
    assert ours[1] == b'+<time> [0 <addr>] "SET" "k" "a\\nb\\"\\\\\\x01\\x7f\\xff\\t\\r\\a\\b z"\r\n'


def _monitor_session(port: int) -> list[bytes]:
    c = RawClient(port)
    try:
        out = [c.call("MONITOR"), c.call("GET", "k"), c.call("PUBLISH", "ch", "m")]
        c.send_raw(b"*1\r\n$7\r\nMONITOR\r\n*1\r\n$4\r\nPING\r\n")  # MONITOR again: no reply
        out += [c.read_reply(timeout=5), _LINE_HEAD.sub(b"+<time> ", c.read_reply(timeout=5))]
        out += [c.call("RESET"), c.call("GET", "k"), c.call("MULTI"), c.call("MONITOR"),
                c.call("EXEC")]
        c.call("MONITOR")
        c.send_raw(b"*1\r\n$4\r\nQUIT\r\n")
        out.append(c.read_until_closed())
        return out
    finally:
        c.close()


def test_monitor_client_commands(differ):
    """A monitor may not touch the keyspace, sees its own commands after
    their replies, leaves monitor mode with RESET, and MONITOR in MULTI fails."""
    ours_port, theirs_port = _ports(differ)
    ours = _monitor_session(ours_port)
    assert ours == _monitor_session(theirs_port)
    assert ours[1] == b"-ERR Replica can't interact with the keyspace\r\n"
