"""A blocked command served later: a run that fails (its group destroyed,
its key deleted) counts as a failed call in INFO commandstats, as Redis 7.2+
counts the command it runs again (Redis 8's stream-cgroups.tcl "XGROUP
DESTROY should unblock XREADGROUP with -NOGROUP": calls=1, failed_calls=1);
one served is logged in the slowlog as the command it was."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.engine import BLOCKED
from tidelog.resp.replies import ErrorReply


def commandstat(h: Harness, name: str) -> str:
    text = h.ok("INFO", "commandstats")
    text = text if isinstance(text, bytes) else text.text
    for line in text.decode().split("\r\n"):
        if line.startswith(f"cmdstat_{name}:"):
            return line
    return ""


def test_a_blocked_xreadgroup_failing_when_served_counts_as_failed():
    h = Harness()
    h.ok("XGROUP", "CREATE", "mystream", "mygroup", "$", "MKSTREAM")
    h.ok("CONFIG", "RESETSTAT")
    reader = h.new_client()
    assert h("XREADGROUP", "GROUP", "mygroup", "Alice", "BLOCK", "0", "STREAMS", "mystream",
             ">", client=reader) is BLOCKED
    h.ok("XGROUP", "DESTROY", "mystream", "mygroup")
    [reply] = reader.inbox
    assert isinstance(reply, ErrorReply) and reply.message.startswith(b"NOGROUP")
    line = commandstat(h, "xreadgroup")
    assert "calls=1," in line and line.endswith("rejected_calls=0,failed_calls=1")
    assert h.engine.stats["total_error_replies"] == 1


def test_a_served_blocked_command_goes_into_the_slowlog():
    h = Harness()
    h.ok("CONFIG", "SET", "slowlog-log-slower-than", "0")
    reader = h.new_client()
    assert h("BLPOP", "l", "0", client=reader) is BLOCKED
    h.ok("SLOWLOG", "RESET")
    h.ok("LPUSH", "l", "foo")
    assert reader.inbox == [[b"l", b"foo"]]
    newest = h.ok("SLOWLOG", "GET", "1")[0]
    assert newest[3] == [b"BLPOP", b"l", b"0"]
