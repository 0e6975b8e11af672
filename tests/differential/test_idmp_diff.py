"""Idempotent production (Redis 8.6/8.8) next to redis-server 7.0.15, which
has none of it: where the two must differ, each difference is asserted
byte for byte (docs/compatibility.md lists them).

The expected 8.6 behaviour itself is tested against redis.io's pages in
tests/unit/test_idmp_commands.py; here we pin what 7.0 does instead, and that
XINFO STREAM is 7.0's reply plus the six IDMP fields
(https://redis.io/docs/latest/commands/xinfo-stream/).
"""

from __future__ import annotations

import re

import pytest

from tests.support.differ_tools import without_idmp_fields

pytestmark = pytest.mark.differential

IDMP_BLOCK = (rb"\$13\r\nidmp-duration\r\n:100\r\n\$12\r\nidmp-maxsize\r\n:100\r\n"
              rb"\$12\r\npids-tracked\r\n:0\r\n\$12\r\niids-tracked\r\n:0\r\n"
              rb"\$10\r\niids-added\r\n:0\r\n\$15\r\niids-duplicates\r\n:0\r\n")


def test_xinfo_stream_is_7_0_plus_the_idmp_fields(differ):
    differ.check("XADD", "s", "1-1", "f", "v")
    for argv in (["XINFO", "STREAM", "s"], ["XINFO", "STREAM", "s", "FULL"]):
        ours = differ.ours.call(*argv)
        theirs = differ.theirs.call(*argv)
        assert b"idmp-duration" not in theirs
        # After recorded-first-entry-id, before groups (summary) or entries (FULL).
        assert re.search(rb"recorded-first-entry-id\r\n\$3\r\n1-1\r\n" + IDMP_BLOCK +
                         rb"\$(6\r\ngroups|7\r\nentries)\r\n", ours), ours
        size_ours = int(ours[1:ours.index(b"\r\n")])
        size_theirs = int(theirs[1:theirs.index(b"\r\n")])
        assert size_ours == size_theirs + 12  # six more field/value pairs (RESP2)
        assert without_idmp_fields(ours, theirs) == theirs
    differ.resp3()
    ours = differ.ours.call("XINFO", "STREAM", "s")
    theirs = differ.theirs.call("XINFO", "STREAM", "s")
    assert ours.startswith(b"%16\r\n") and theirs.startswith(b"%10\r\n")
    assert without_idmp_fields(ours, theirs) == theirs


def test_an_xinfo_stream_reply_without_the_fields_fails_the_check():
    theirs = (b"*2\r\n$6\r\nlength\r\n:0\r\n")
    ours = (b"*16\r\n$6\r\nlength\r\n:1\r\n" + b"x\r\n" * 17  # the next five fields
            + b"$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:0\r\n")
    with pytest.raises(AssertionError, match="without the IDMP fields"):
        without_idmp_fields(ours, theirs)


def test_7_0_has_no_idmp_commands(differ):
    differ.check("XADD", "s", "1-1", "f", "v")
    for argv in (["XCFGSET", "s", "IDMP-DURATION", "5"], ["XIDMPRECORD", "s", "p", "i", "1-1"]):
        assert differ.theirs.call(*argv).startswith(b"-ERR unknown command")
        assert differ.ours.call(*argv) == b"+OK\r\n"
    # 7.0 reads IDMP as the entry ID; we add the entry.
    argv = ["XADD", "s", "IDMP", "p", "i2", "*", "f", "v"]
    assert differ.theirs.call(*argv) == \
        b"-ERR Invalid stream ID specified as stream command argument\r\n"
    assert re.fullmatch(rb"\$\d+\r\n\d+-0\r\n", differ.ours.call(*argv))
