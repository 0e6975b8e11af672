"""Giving pending entries back and taking them over real sockets, from
redis-py (RESP2 and RESP3): XNACK (Redis 8.8), XREADGROUP ... CLAIM (8.4; a
raw-byte client checks that its delivery metadata are RESP integers,
redis/redis#14524), MAXCOUNT (8.10).

Replies are read raw, as in ``test_ref_policies.py``.
"""

from __future__ import annotations

import re
import threading
import time

import pytest
import redis

from tests.support.redispy import LLONG_MAX, as_dict, raw_replies, streams, x
from tests.support.waits import wait_blocked

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, tidelog):
    client = raw_replies(redis.Redis(port=tidelog.port, protocol=request.param))
    yield client
    client.close()


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
