"""Deleting entries and groups' references over real sockets, from redis-py
(RESP2 and RESP3): XDELEX, XACKDEL, KEEPREF | DELREF | ACKED on XADD and
XTRIM (Redis 8.2).

Commands go through ``execute_command`` with redis-py's reply callbacks
replaced by the identity (``tests/support/redispy.py``), so what is asserted
is the server's reply as redis-py's RESP parser reads it.  Each test names
the redis.io page it follows.
"""

from __future__ import annotations

import pytest
import redis

from tests.support.redispy import raw_replies, x

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, tidelog):
    client = raw_replies(redis.Redis(port=tidelog.port, protocol=request.param))
    yield client
    client.close()


# -- XDELEX, XACKDEL (https://redis.io/docs/latest/commands/xdelex/,
#    https://redis.io/docs/latest/commands/xackdel/) -------------------------------------

def test_xdelex_doc_example(c):
    for id, n in (("1784722083515-0", 1), ("1784722083516-0", 2), ("1784722083517-0", 3)):
        x(c, "XADD", "mystream", id, f"field{n}", f"value{n}")
    assert x(c, "XDELEX", "mystream", "KEEPREF", "IDS", "2",
             "1526919030474-55", "1526919030474-56") == [-1, -1]
    assert len(x(c, "XRANGE", "mystream", "-", "+")) == 3
    assert x(c, "XDELEX", "mystream", "IDS", "2", "1784722083516-0", "1784722083516-0") == [1, -1]
    assert x(c, "XDELEX", "missing", "ACKED", "IDS", "1", "1-1") == [-1]


def test_xackdel_doc_example(c):
    x(c, "XADD", "mystream", "1755870377536-0", "field1", "value1")
    x(c, "XADD", "mystream", "1755870387045-0", "field2", "value2")
    x(c, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    x(c, "XREADGROUP", "GROUP", "mygroup", "consumer1", "COUNT", "2", "STREAMS", "mystream", ">")
    assert x(c, "XACKDEL", "mystream", "mygroup", "KEEPREF", "IDS", "2",
             "1755870377536-0", "1755870387045-0") == [1, 1]
    assert x(c, "XPENDING", "mystream", "mygroup") == [0, None, None, None]
    assert x(c, "XRANGE", "mystream", "-", "+") == []


def test_delref_and_acked_with_two_groups(c):
    for i in (1, 2, 3):
        x(c, "XADD", "s", f"{i}-0", "f", "v")
    for g in ("g1", "g2"):
        x(c, "XGROUP", "CREATE", "s", g, "0")
        x(c, "XREADGROUP", "GROUP", g, "c", "STREAMS", "s", ">")
    assert x(c, "XACKDEL", "s", "g1", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    assert x(c, "XDELEX", "s", "ACKED", "IDS", "1", "1-0") == [2]
    assert x(c, "XACKDEL", "s", "g2", "ACKED", "IDS", "1", "1-0") == [1]
    assert x(c, "XDELEX", "s", "DELREF", "IDS", "2", "2-0", "3-0") == [1, 1]
    assert x(c, "XPENDING", "s", "g1")[0] == 0 and x(c, "XPENDING", "s", "g2")[0] == 0
    assert x(c, "XLEN", "s") == 0


@pytest.mark.parametrize("argv, message", [
    (["XDELEX", "s", "IDS", "0", "1-1"], "Number of IDs must be a positive integer"),
    (["XACKDEL", "s", "g", "IDS", "3", "1-1", "2-2"],
     "The `numids` parameter must match the number of arguments"),
    (["XACKDEL", "s", "g", "IDS", "1", "1-1", "2-2"], "syntax error"),
    (["XDELEX", "s", "KEEPREF", "DELREF", "IDS", "1", "1-1"], "syntax error"),
    (["XTRIM", "s", "MAXLEN", "1", "ACKED", "DELREF"], "syntax error"),
    (["XNACK", "s", "g", "BADMODE", "IDS", "1", "1-0"], "mode must be SILENT, FAIL, or FATAL"),
    (["XNACK", "s", "g", "SILENT", "IDS", "2", "1-0"], "number of IDs doesn't match numids"),
    (["XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1"],
     "Invalid RETRYCOUNT value, must be >= 0"),
    (["XNACK", "s", "g", "SILENT", "FORCE", "RETRYCOUNT", "5"],
     "syntax error, expected IDS keyword"),
    (["XNACK", "s", "g", "FAIL", "BADOPT", "IDS", "1", "1-0"],
     "Unrecognized XNACK option 'BADOPT'"),
    (["XREADGROUP", "GROUP", "g", "c", "CLAIM", "-10", "STREAMS", "s", ">"],
     "min-idle-time must be a positive integer"),
    (["XREADGROUP", "GROUP", "g", "c", "CLAIM", "5.5", "STREAMS", "s", ">"],
     "min-idle-time is not an integer"),
    (["XREAD", "COUNT", "2", "CLAIM", "10", "STREAMS", "s", "0-0"],
     "The CLAIM option is only supported by XREADGROUP. You called XREAD instead."),
])
def test_error_texts(c, argv, message):
    x(c, "XADD", "s", "1-0", "f", "v")
    x(c, "XGROUP", "CREATE", "s", "g", "0")
    with pytest.raises(redis.ResponseError) as err:
        x(c, *argv)
    assert str(err.value) == message


# -- XADD/XTRIM KEEPREF | DELREF | ACKED (https://redis.io/docs/latest/commands/xadd/,
#    https://redis.io/docs/latest/commands/xtrim/) ---------------------------------------

def test_trimming_policies_with_several_groups(c):
    for i in range(1, 6):
        x(c, "XADD", "s", f"{i}-0", "f", "v")
    x(c, "XGROUP", "CREATE", "s", "g1", "0")
    x(c, "XGROUP", "CREATE", "s", "g2", "0")
    x(c, "XREADGROUP", "GROUP", "g1", "a", "STREAMS", "s", ">")
    x(c, "XREADGROUP", "GROUP", "g2", "b", "COUNT", "3", "STREAMS", "s", ">")
    x(c, "XACK", "s", "g1", "1-0", "2-0", "3-0", "4-0", "5-0")
    x(c, "XACK", "s", "g2", "1-0", "3-0")
    # ACKED: 1-0 is done everywhere, 2-0 is pending in g2
    assert x(c, "XADD", "s", "MAXLEN", "=", "1", "ACKED", "6-0", "f", "v") == b"6-0"
    assert [e[0] for e in x(c, "XRANGE", "s", "-", "+")] == [b"2-0", b"3-0", b"4-0", b"5-0", b"6-0"]
    # DELREF: the trimmed 2-0 leaves g2's PEL as well
    assert x(c, "XTRIM", "s", "MINID", "3-0", "DELREF") == 1
    assert x(c, "XPENDING", "s", "g2")[0] == 0
    # KEEPREF (the default) trims whatever groups say
    assert x(c, "XTRIM", "s", "MAXLEN", "1", "KEEPREF") == 3
    assert [e[0] for e in x(c, "XRANGE", "s", "-", "+")] == [b"6-0"]
