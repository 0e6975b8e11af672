"""Redis 8.2-8.10 stream features over real sockets, from redis-py (RESP2 and RESP3).

Commands go through ``execute_command`` with redis-py's reply callbacks
replaced by the identity, so what is asserted is the server's reply as
redis-py's RESP parser reads it (RESP3 maps become dicts); a raw-byte client
checks the one thing a parser hides, that CLAIM's delivery metadata are RESP
integers (Redis 8.4.2, redis/redis#14524).  Each test names the redis.io page
it follows.
"""

from __future__ import annotations

import re
import threading
import time

import pytest
import redis

from tests.support.waits import wait_blocked

pytestmark = pytest.mark.timeout(60)

LLONG_MAX = 2**63 - 1
RAW_COMMANDS = ("XADD", "XREAD", "XREADGROUP", "XPENDING", "XCLAIM", "XAUTOCLAIM", "XRANGE",
                "XACK", "XTRIM", "XLEN", "XGROUP CREATE", "XINFO STREAM", "XDEL")


def raw_replies(client: redis.Redis) -> redis.Redis:
    for name in RAW_COMMANDS:
        client.set_response_callback(name, lambda response, **options: response)
    return client


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, tidelog):
    client = raw_replies(redis.Redis(port=tidelog.port, protocol=request.param))
    yield client
    client.close()


def x(client: redis.Redis, *argv):
    return client.execute_command(*argv)


def as_dict(reply) -> dict:
    """A RESP3 map, or the flat RESP2 array of the same, as a dict."""
    return reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2]))


def streams(reply) -> list[tuple[bytes, list]]:
    """XREAD/XREADGROUP's reply as ``[(key, entries)]`` in RESP2 and RESP3 alike."""
    if reply is None:
        return []
    if isinstance(reply, dict):
        return list(reply.items())
    return [(key, entries) for key, entries in reply]


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


# -- XNACK (https://redis.io/docs/latest/commands/xnack/) ---------------------------------

def test_xnack_doc_example_then_claims_ignore_min_idle(c):
    x(c, "XADD", "mystream", "1526569498055-0", "field", "value1")
    x(c, "XADD", "mystream", "1526569498056-0", "field", "value2")
    x(c, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    x(c, "XREADGROUP", "GROUP", "mygroup", "consumer1", "STREAMS", "mystream", ">")
    assert x(c, "XNACK", "mystream", "mygroup", "FAIL", "IDS", "2",
             "1526569498055-0", "1526569498056-0") == 2
    assert x(c, "XPENDING", "mystream", "mygroup", "-", "+", "10") == [
        [b"1526569498055-0", b"", -1, 1], [b"1526569498056-0", b"", -1, 1]]
    assert x(c, "XNACK", "mystream", "mygroup", "FATAL", "IDS", "1", "1526569498056-0") == 1
    info = as_dict(x(c, "XINFO", "STREAM", "mystream", "FULL"))
    group = as_dict(info[b"groups"][0])
    assert group[b"nacked-count"] == 2
    # a min-idle-time of ten years still claims released entries
    decade = str(10 * 365 * 86_400_000)
    cursor, claimed, deleted = x(c, "XAUTOCLAIM", "mystream", "mygroup", "c2", decade, "0")
    assert cursor == b"0-0" and [e[0] for e in claimed] == [b"1526569498055-0", b"1526569498056-0"]
    pending = x(c, "XPENDING", "mystream", "mygroup", "-", "+", "10")
    assert [(p[1], p[3]) for p in pending] == [(b"c2", 2), (b"c2", LLONG_MAX)]


# -- XREADGROUP ... CLAIM (https://redis.io/docs/latest/commands/xreadgroup/) ------------

def test_claim_replies_four_integers_per_entry(c, raw):
    for i in (1, 2):
        x(c, "XADD", "s", f"{i}-0", "f", f"v{i}")
    x(c, "XGROUP", "CREATE", "s", "g", "0")
    x(c, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">")
    time.sleep(0.06)
    got = streams(x(c, "XREADGROUP", "GROUP", "g", "c2", "CLAIM", "50", "STREAMS", "s", ">"))
    assert len(got) == 1 and got[0][0] == b"s"
    claimed, new = got[0][1]
    assert claimed[:2] == [b"1-0", [b"f", b"v1"]] and claimed[2] >= 50 and claimed[3] == 1
    assert new == [b"2-0", [b"f", b"v2"], 0, 0]
    # the same on the wire: integers, not strings (Redis 8.4.2)
    time.sleep(0.06)
    reply = raw.call("XREADGROUP", "GROUP", "g", "c3", "CLAIM", "50", "STREAMS", "s", ">")
    assert re.fullmatch(rb"\*1\r\n\*2\r\n\$1\r\ns\r\n\*2\r\n"
                        rb"\*4\r\n\$3\r\n1-0\r\n\*2\r\n\$1\r\nf\r\n\$2\r\nv1\r\n:\d+\r\n:2\r\n"
                        rb"\*4\r\n\$3\r\n2-0\r\n\*2\r\n\$1\r\nf\r\n\$2\r\nv2\r\n:\d+\r\n:1\r\n",
                        reply), reply


def test_blocked_claim_reader_gets_an_entry_once_it_is_idle_enough(c, tidelog):
    x(c, "XADD", "s", "1-0", "f", "v")
    x(c, "XGROUP", "CREATE", "s", "g", "0")
    x(c, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    started = time.monotonic()
    got = streams(x(c, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "5000", "CLAIM", "300",
                    "STREAMS", "s", ">"))
    elapsed = time.monotonic() - started
    assert [e[0] for e in got[0][1]] == [b"1-0"]
    assert 0.25 <= elapsed < 3, elapsed
    assert x(c, "XPENDING", "s", "g", "-", "+", "10")[0][1] == b"c2"


def test_blocked_claim_reader_is_woken_by_xnack(c, tidelog):
    x(c, "XADD", "s", "1-0", "f", "v")
    x(c, "XGROUP", "CREATE", "s", "g", "0")
    x(c, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    reader = raw_replies(redis.Redis(port=tidelog.port, protocol=c.connection_pool
                                     .connection_kwargs.get("protocol", 2)))
    result: list = []
    thread = threading.Thread(target=lambda: result.append(x(
        reader, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "20000", "CLAIM", "60000",
        "STREAMS", "s", ">")))
    try:
        thread.start()
        wait_blocked(tidelog, 1)
        assert x(c, "XNACK", "s", "g", "SILENT", "IDS", "1", "1-0") == 1
        thread.join(10)
        got = streams(result[0])
        assert got[0][1] == [[b"1-0", [b"f", b"v"], -1, 0]]
    finally:
        reader.close()


# -- MAXCOUNT (https://redis.io/docs/latest/commands/xread/) ------------------------------

def test_maxcount_across_several_keys(c):
    for key in ("s1", "s2", "s3"):
        for i in (1, 2, 3):
            x(c, "XADD", key, f"{i}-0", "f", "v")
        x(c, "XGROUP", "CREATE", key, "g", "0")
    got = streams(x(c, "XREAD", "COUNT", "2", "MAXCOUNT", "3",
                    "STREAMS", "s1", "s2", "s3", "0", "0", "0"))
    assert [(k, len(es)) for k, es in got] == [(b"s1", 2), (b"s2", 1)]
    got = streams(x(c, "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "7",
                    "STREAMS", "s1", "s2", "s3", ">", ">", ">"))
    assert [(k, len(es)) for k, es in got] == [(b"s1", 3), (b"s2", 3), (b"s3", 1)]
    got = streams(x(c, "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "7",
                    "STREAMS", "s1", "s2", "s3", ">", ">", ">"))
    assert [(k, len(es)) for k, es in got] == [(b"s3", 2)]
