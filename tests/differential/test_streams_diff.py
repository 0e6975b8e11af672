"""Stream commands against redis-server 7.0.15: the same commands to both
servers, raw reply bytes compared.

Most scenarios run at stream-node-max-entries 1, 2, 4 and 100 with
stream-node-max-bytes 0, so that node boundaries (which decide what an
approximate trim removes) come from the entry count alone; a few run at the
default 4096 bytes, where the split depends on our byte accounting matching
the listpack's.  Explicit IDs everywhere, except where ``*`` replies are
normalised.  The effects test compares what we propagate with what Redis
writes to its AOF.

Known, deliberate differences (asserted as such in test_known_differences):
XREAD's ``+`` ID (Redis 7.4; 7.0 refuses it), the unbalanced-XREAD error
text, which 7.4 changed when it added ``+``, and ``XADD k <ms>-*`` when the
last ID is ``<ms>-<max>``, where 7.0.15's text depends on a stale errno.
"""

from __future__ import annotations

import random

import pytest

from tests.support.differ_tools import Pair, captured_effects, read_aof_commands, wait_blocked
from tests.support.rawclient import RawClient, encode_command

pytestmark = pytest.mark.differential

NODE_SIZES = [1, 2, 4, 100]
U64 = 2**64 - 1


@pytest.fixture(params=NODE_SIZES, ids=lambda n: f"node{n}")
def d(request, differ):
    """The differ, with both servers at one node size (and no byte limit)."""
    differ.reset(node_entries=request.param, node_bytes=0)
    return differ


def fill(d, key, n, start=1, fields=("f", "v")):
    for i in range(start, start + n):
        d.check("XADD", key, f"{i}-1", *fields)


def dump(d, *keys):
    for key in keys:
        d.check("XRANGE", key, "-", "+")
        d.check("XREVRANGE", key, "+", "-")
        d.check("XLEN", key)
        d.check("TYPE", key)
        d.check("EXISTS", key)


# -- XADD ------------------------------------------------------------------------------

def test_xadd_ids(d):
    d.check("XADD", "s", "1-1", "f", "v")
    d.check("XADD", "s", "1-1", "f", "v")
    d.check("XADD", "s", "1-0", "f", "v")
    d.check("XADD", "s", "1-*", "f", "v")
    d.check("XADD", "s", "1-*", "a", "b", "c", "d")
    d.check("XADD", "s", "0-*", "f", "v")
    d.check("XADD", "s", "2", "f", "v")
    d.check("XADD", "s", "2-*", "f", "v")
    d.check("XADD", "s", "3-18446744073709551615", "f", "v")
    d.check("XADD", "s", "4-*", "f", "v")
    d.check("XADD", "z", "0-0", "f", "v")
    d.check("XADD", "z", "0", "f", "v")
    d.check("XADD", "z", "0-*", "f", "v")
    d.check("XADD", "z", "0-*", "f", "v")
    d.check("XADD", "big", f"{U64}-{U64 - 1}", "f", "v")
    d.check("XADD", "big", f"{U64}-*", "f", "v")
    for id in ("*", f"{U64}-*", "1-1", f"{U64}-{U64}"):
        d.check("XADD", "big", id, "f", "v")
    for bad in ("-", "+", "1-", "-1", "1-x", "x", f"{U64 + 1}", f"1-{U64 + 1}", "1-2-3",
                "1.5", " 1", "+1", "01", "1-01", "1-*-*", "*-1", "*-*", "(1", "1" * 128):
        d.check("XADD", "e", bad, "f", "v")
    d.check("XADD", "e", "1-1", "", "")
    d.check("XADD", "e", "2-1", "f" * 300, "v" * 5000)
    dump(d, "s", "z", "big", "e")


def test_xadd_arity_and_options(d):
    d.check("XADD", "s")
    d.check("XADD", "s", "1-1")
    d.check("XADD", "s", "1-1", "f")
    d.check("XADD", "s", "1-1", "f", "v", "g")
    d.check("XADD", "s", "*", "f")
    d.check("XADD", "s", "MAXLEN", "5")
    d.check("XADD", "s", "MAXLEN", "5", "1-1")
    d.check("XADD", "s", "MAXLEN", "5", "1-1", "f")
    d.check("XADD", "s", "MAXLEN", "5", "NOMKSTREAM")
    d.check("XADD", "s", "MAXLEN", "5", "NOMKSTREAM", "f")
    d.check("XADD", "s", "NOMKSTREAM", "1-1", "f", "v")
    d.check("XADD", "s", "LIMIT", "5", "1-1", "f", "v")
    d.check("XADD", "s", "LIMIT", "0", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "5", "LIMIT", "5", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "=", "5", "LIMIT", "5", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "5", "MINID", "5", "1-1", "f", "v")
    d.check("XADD", "s", "MINID", "5", "MAXLEN", "~", "5", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "5", "MAXLEN", "5", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "-1", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "~", "-1", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "x", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "~", "x", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "x", "1-1", "f", "v")
    d.check("XADD", "s", "MINID", "x", "1-1", "f", "v")
    d.check("XADD", "s", "MINID", "-", "1-1", "f", "v")
    d.check("XADD", "s", "MINID", "5-*", "1-1", "f", "v")
    d.check("XADD", "s", "MINID", "~", "+", "1-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "~", "f", "v")
    d.check("XADD", "s", "MAXLEN", "~", "1-1", "f", "v")
    d.check("XADD", "s", "FOO", "1-1", "f", "v")
    d.check("XADD", "s", "nomkstream", "maxlen", "~", "3", "limit", "2", "1-1", "f", "v")
    d.check("XADD", "s", "LIMIT", "2", "MINID", "~", "0", "NOMKSTREAM", "2-1", "f", "v")
    d.check("XADD", "s", "MAXLEN", "=", "1", "MAXLEN", "3-1", "f", "v")
    d.check("XADD", "s", "NOMKSTREAM", "NOMKSTREAM", "4-1", "f", "v")
    d.check("XADD", "s", "MINID", "=", "0", "5-1", "MAXLEN", "1")
    dump(d, "s")


def test_xadd_nomkstream_and_wrong_type(d):
    d.check("XADD", "s", "NOMKSTREAM", "1-1", "f", "v")
    d.check("XADD", "s", "NOMKSTREAM", "MAXLEN", "0", "1-1", "f", "v")
    d.check("EXISTS", "s")
    d.check("SET", "str", "x")
    d.check("XADD", "str", "1-1", "f", "v")
    d.check("XADD", "str", "NOMKSTREAM", "1-1", "f", "v")
    d.check("XADD", "str", "0-0", "f", "v")         # argument errors first
    d.check("XADD", "str", "1-1", "f")
    d.check("XADD", "str", "LIMIT", "1", "1-1", "f", "v")
    d.check("XADD", "str", "MAXLEN", "x", "1-1", "f", "v")
    d.check("GET", "str")
    d.check("XADD", "s", "MAXLEN", "0", "1-1", "f", "v")  # creates an empty stream
    dump(d, "s")
    d.check("XADD", "s", "NOMKSTREAM", "1-1", "f", "v")
    d.check("XADD", "s", "NOMKSTREAM", "2-1", "f", "v")
    dump(d, "s")


def test_xadd_star_is_normalised(differ):
    differ.normalise(rb"\$\d+\r\n\d{10,}-\d+\r\n", b"<ID>")
    differ.check("XADD", "s", "*", "f", "v")
    differ.check("XADD", "s", "*", "f", "v")
    differ.check("XADD", "s", "MAXLEN", "1", "*", "f", "v")
    differ.check("XLEN", "s")
    differ.check("XADD", "s", "1-1", "f", "v")
    differ.check("XADD", "t", "9999999999999-5", "f", "v")
    differ.check("XADD", "t", "*", "f", "v")
    assert differ.check("XRANGE", "t", "(9999999999999-5", "+").count(b"9999999999999-6") == 1


def test_pipelined_xadd_bursts(differ):
    """A producer's burst (consecutive ``XADD key * ...`` in one write) runs
    as one call into the stream (Engine.execute_run): the replies must be
    those of the commands one by one, errors in the middle included."""
    id_pattern = rb"\$\d+\r\n\d{10,}-\d+\r\n"
    differ.normalise(id_pattern, b"<ID>")
    differ.check("SET", "str", "x")
    burst = (
        [["XADD", "s", "*", "n", i] for i in range(20)]
        + [["XADD", "s", "*", "lonely"], ["XADD", "s", "*", "a", "1", "b", "2"]]
        + [["XLEN", "s"]]
        + [["XADD", "str", "*", "f", "v"]] * 3
        + [["xadd", "s", "*", "lower", "case"], ["XADD", "s", "*", "UPPER", "CASE"]]
        + [["XADD", "s", "1-1", "f", "v"], ["XADD", "s", "*", "f", "v"]]
        + [["XADD", "t", "*", "f", "v"], ["XADD", "s", "*", "f", "v"]] * 3
        + [["XADD", "full", "18446744073709551615-18446744073709551615", "f", "v"]]
        + [["XADD", "full", "*", "f", "v"]] * 2
        + [["XRANGE", "s", "-", "+"], ["XLEN", "s"], ["XLEN", "t"], ["XINFO", "STREAM", "s"]]
    )
    ours, theirs = differ.ours.pipeline(burst), differ.theirs.pipeline(burst)
    for argv, mine, redis in zip(burst, ours, theirs):
        assert differ._norm(mine) == differ._norm(redis) or argv[:2] == ["XINFO", "STREAM"], argv
    ids = [int(reply.split(b"\r\n")[1].replace(b"-", b"")) for reply in ours[:20]]
    assert ids == sorted(ids) and len(set(ids)) == 20
    differ.check("XINFO", "STREAM", "s")  # without the IDMP fields, compared


def test_a_protocol_error_after_a_burst_answers_the_burst_first(differ):
    differ.normalise(rb"\$\d+\r\n\d{10,}-\d+\r\n", b"<ID>")
    raw = b"".join(encode_command(["XADD", "s", "*", "n", i]) for i in range(5)) + b"*1\r\n$x\r\n"
    replies = []
    for port in (differ.ours.sock.getpeername()[1], differ.theirs.sock.getpeername()[1]):
        client = RawClient(port)
        client.send_raw(raw)
        replies.append(differ._norm(client.read_until_closed()))
        client.close()
    assert replies[0] == replies[1]
    assert replies[0].count(b"<ID>") == 5 and b"Protocol error" in replies[0]
    differ.check("XLEN", "s")


def test_xadd_capped_form(differ):
    # XADD key MAXLEN ~ n * ..., its commonest form with options, has its own parse.
    differ.normalise(rb"\$\d+\r\n\d{10,}-\d+\r\n", b"<ID>")
    differ.check("SET", "str", "x")
    for argv in (["MAXLEN", "~", "-1", "*", "f", "v"], ["MAXLEN", "~", "x", "*", "f", "v"],
                 ["MAXLEN", "~", "01", "*", "f", "v"], ["MAXLEN", "~", "2", "*"],
                 ["MAXLEN", "~", "2", "*", "f"], ["MAXLEN", "~", "2", "*", "f", "v", "g"],
                 ["maxlen", "~", "2", "*", "f", "v"], ["MAXLEN", "~", "2", "*", "f", "v"],
                 ["MAXLEN", "~", "0", "*", "f", "v"]):
        differ.check("XADD", "s", *argv)
        differ.check("XADD", "str", *argv)
    differ.check("XLEN", "s")


@pytest.mark.parametrize("how", ["=", "~", None])
def test_xadd_maxlen(d, how):
    approx = [how] if how else []
    for i in range(1, 41):
        d.check("XADD", "s", "MAXLEN", *approx, i % 7, f"{i}-1", "f", i)
        d.check("XLEN", "s")
    dump(d, "s")
    for limit in (0, 1, 3, 10):
        for i in range(41 + limit * 10, 51 + limit * 10):
            d.check("XADD", "s", "MAXLEN", "~", 2, "LIMIT", limit, f"{i}-1", "f", i)
            d.check("XLEN", "s")
    dump(d, "s")


@pytest.mark.parametrize("how", ["=", "~", None])
def test_xadd_minid(d, how):
    approx = [how] if how else []
    for i in range(1, 41):
        d.check("XADD", "s", "MINID", *approx, max(0, i - i % 9), f"{i}-1", "f", i)
        d.check("XLEN", "s")
    dump(d, "s")
    d.check("XADD", "s", "MINID", *approx, 1000, "100-1", "f", "v")
    dump(d, "s")
    for i in range(101, 120):
        d.check("XADD", "s", "MINID", "~", i - 5, "LIMIT", i % 4, f"{i}-1", "f", i)
    dump(d, "s")


# -- XTRIM -----------------------------------------------------------------------------

def test_xtrim_errors(d):
    fill(d, "s", 3)
    d.check("SET", "str", "x")
    for argv in (["s"], ["s", "MAXLEN"], ["s", "MAXLEN", "~"], ["s", "MAXLEN", "x"],
                 ["s", "MAXLEN", "-1"], ["s", "MINID", "x"], ["s", "MINID", "5-*"],
                 ["s", "MINID", "+"], ["s", "LIMIT", "1"], ["s", "LIMIT", "0"],
                 ["s", "MAXLEN", "1", "LIMIT", "1"], ["s", "MAXLEN", "1", "MINID", "1"],
                 ["s", "MAXLEN", "~", "1", "LIMIT", "-1"], ["s", "MAXLEN", "~", "1", "LIMIT"],
                 ["s", "MAXLEN", "~", "1", "FOO"], ["s", "FOO", "MAXLEN", "1"],
                 ["s", "MAXLEN", "=", "1", "LIMIT", "2"], ["s", "MAXLEN", "1", "2"],
                 ["nokey", "MAXLEN", "0"], ["nokey", "MAXLEN", "x"],
                 ["str", "MAXLEN", "0"], ["str", "MAXLEN", "x"], ["str", "LIMIT", "1"],
                 ["s", "limit", "2", "maxlen", "~", "1"], ["s", "MAXLEN", "=", "=", "1"],
                 ["s", "MAXLEN", "1", "MAXLEN", "2"], ["s", "MINID", "=", "2", "MINID", "3"]):
        d.check("XTRIM", *argv)
    dump(d, "s")


@pytest.mark.parametrize("strategy", ["MAXLEN", "MINID"])
def test_xtrim(d, strategy):
    fill(d, "s", 60)
    d.check("XDEL", "s", "3-1", "4-1", "17-1", "30-1")
    thresholds = [55, 50, 47, 40, 33, 20, 10, 5, 1, 0] if strategy == "MAXLEN" else \
        ["5", "5-2", "9", "20-0", "21-1", "30", "41-1", "57", "60-1", "61"]
    for threshold in thresholds:
        d.check("XTRIM", "s", strategy, "~", threshold, "LIMIT", 3)
        d.check("XTRIM", "s", strategy, "~", threshold)
        d.check("XLEN", "s")
        d.check("XRANGE", "s", "-", "+", "COUNT", 3)
        d.check("XTRIM", "s", strategy, threshold)
        dump(d, "s")
    fill(d, "s", 30, start=100)
    d.check("XTRIM", "s", strategy, "~", 0 if strategy == "MAXLEN" else "200", "LIMIT", 0)
    dump(d, "s")


def test_xtrim_default_limit(differ):
    for node, n in ((1, 250), (3, 700)):
        differ.reset(node_entries=node)
        differ.ours.pipeline([["XADD", "s", f"{i}-1", "f", "v"] for i in range(1, n + 1)])
        differ.theirs.pipeline([["XADD", "s", f"{i}-1", "f", "v"] for i in range(1, n + 1)])
        differ.check("XTRIM", "s", "MAXLEN", "~", "0")
        differ.check("XTRIM", "s", "MINID", "~", str(n))
        differ.check("XADD", "s", "MAXLEN", "~", "0", f"{n + 1}-1", "f", "v")
        differ.check("XLEN", "s")


# -- XRANGE / XREVRANGE ------------------------------------------------------------------

def test_ranges(d):
    for ms in (1, 2, 5):
        for seq in (0, 1, 7):
            d.check("XADD", "s", f"{ms}-{seq}", "f", f"{ms}.{seq}", "x", "y")
    d.check("XDEL", "s", "2-1", "5-7")
    bounds = ["-", "+", "0", "1", "2", "2-1", "2-2", "5", "6", "(1", "(1-0", "(2", "(2-1",
              "(5-7", "(0-0", f"({U64}", f"({U64}-{U64 - 1}", "18446744073709551615"]
    for lo in bounds:
        for hi in bounds:
            d.check("XRANGE", "s", lo, hi)
            d.check("XREVRANGE", "s", hi, lo)
    for count in ("0", "-1", "1", "2", "100", "9223372036854775807"):
        d.check("XRANGE", "s", "-", "+", "COUNT", count)
        d.check("XREVRANGE", "s", "+", "-", "COUNT", count)
        d.check("XRANGE", "s", "(1-1", "(5", "COUNT", count)
        d.check("XRANGE", "nokey", "-", "+", "COUNT", count)


def test_range_errors(d):
    fill(d, "s", 2)
    d.check("SET", "str", "x")
    for argv in (["s"], ["s", "-"], ["s", "(-", "+"], ["s", "-", "(+"], ["s", "(", "+"],
                 ["s", "x", "+"], ["s", "-", "x"], ["s", "1-*", "+"], ["s", "(1-*", "+"],
                 ["s", f"({U64}-{U64}", "+"], ["s", "-", "(0-0"], ["s", "-", "(0"],
                 ["s", "-", "+", "COUNT"], ["s", "-", "+", "COUNT", "x"], ["s", "-", "+", "FOO"],
                 ["s", "-", "+", "COUNT", "1", "FOO"], ["s", "-", "+", "count", "1", "COUNT", "2"],
                 ["s", "-", "+", "COUNT", "1.5"], ["s", "-1", "+"], ["s", " 1", "+"],
                 ["s", "+1", "+"], ["s", "01", "+"], ["s", "1-01", "+"], ["s", "((1", "+"],
                 ["s", "(" + "1" * 127, "+"], ["s", "1" * 128, "+"],
                 ["str", "-", "+"], ["str", "x", "+"], ["str", "-", "+", "COUNT", "0"],
                 ["str", "-", "+", "FOO"], ["nokey", "x", "+"], ["nokey", "-", "+", "FOO"]):
        d.check("XRANGE", *argv)
        d.check("XREVRANGE", *argv)


# -- XDEL, XLEN, XSETID --------------------------------------------------------------------

def test_xdel(d):
    fill(d, "s", 12)
    d.check("SET", "str", "x")
    d.check("XDEL", "nokey", "1-1")
    d.check("XDEL", "nokey", "bad")
    d.check("XDEL", "str", "1-1")
    d.check("XDEL", "str", "bad")
    d.check("XDEL", "s", "1-1", "bad")
    d.check("XDEL", "s", "-")
    d.check("XDEL", "s", "+")
    d.check("XDEL", "s", "1-*")
    d.check("XDEL", "s")
    d.check("XLEN", "s")
    d.check("XDEL", "s", "1", "1-1", "1-1", "3-1", "99-1")
    for ids in (["12-1"], ["2-1", "4-1"], ["5-1", "6-1", "7-1", "8-1"], ["11-1", "10-1"]):
        d.check("XDEL", "s", *ids)
        dump(d, "s")
        d.check("XREAD", "STREAMS", "s", "0")
    d.check("XADD", "s", "12-1", "f", "v")  # last_id stays at the deleted 12-1
    d.check("XADD", "s", "12-*", "f", "v")
    d.check("XDEL", "s", "9-1", "12-2")
    dump(d, "s")
    d.check("XLEN", "str")
    d.check("XLEN", "nokey")


BELOW_MAX_DELETED = b"-ERR The ID specified in XSETID is smaller than current max_deleted_entry_id\r\n"


def test_xsetid(d):
    fill(d, "s", 3)
    d.check("SET", "str", "x")
    for argv in (["s", "2-5"], ["s", "2-0"], ["s", "1-0"], ["s", "3-0"]):
        d.check("XSETID", *argv)  # below the top item: refused by both
    d.check("XDEL", "s", "3-1")
    # Below the largest deleted ID (3-1): refused since Redis 7.4 (redis/redis
    # PR #11444); 7.0.15 accepts 2-5 (above the last live entry).
    for argv in (["s", "2-5"], ["s", "3-0"]):
        d.check_newer("XSETID", *argv, ours=BELOW_MAX_DELETED)
    for argv in (["s", "3-1"],
                 ["s", "3-2", "ENTRIESADDED", "1"], ["s", "3-2", "ENTRIESADDED", "-1"],
                 ["s", "3-2", "ENTRIESADDED", "x"], ["s", "3-2", "ENTRIESADDED", "2"],
                 ["s", "3-2", "MAXDELETEDID", "3-3"], ["s", "3-2", "MAXDELETEDID", "3-2"],
                 ["s", "3-2", "MAXDELETEDID", "0-0"], ["s", "3-2", "MAXDELETEDID", "1"],
                 ["s", "3-2", "MAXDELETEDID"], ["s", "3-2", "FOO"], ["s", "3-2", "ENTRIESADDED"],
                 ["s", "3-2", "entriesadded", "9", "maxdeletedid", "3-1", "ENTRIESADDED", "10"],
                 ["nokey", "3-2"], ["nokey", "3-2", "ENTRIESADDED", "-1"], ["nokey", "x"],
                 ["str", "5-5"], ["str", "5-5", "ENTRIESADDED", "-1"], ["str", "x"],
                 ["s", "-"], ["s", "+"], ["s", "5"], ["s", "5-*"], ["s", "x"],
                 ["s", "9-0", "MAXDELETEDID", "+"], ["s", "9-0", "MAXDELETEDID", "5-*"],
                 ["s", "9-0", "MAXDELETEDID", "9-1"]):
        d.check("XSETID", *argv)
    d.check("XSETID", "s")
    d.check("XADD", "s", "9-0", "f", "v")
    d.check("XADD", "s", "9-*", "f", "v")
    d.check("XDEL", "s", "1-1", "2-1", "9-1")
    d.check_newer("XSETID", "s", "0-5", ours=BELOW_MAX_DELETED)  # 7.0.15: OK
    dump(d, "s")
    d.check("XADD", "e", "MAXLEN", "0", "5-0", "f", "v")
    d.check("XSETID", "e", "1-0", "ENTRIESADDED", "0")
    d.check("XADD", "e", "1-*", "f", "v")
    dump(d, "e")


# -- XREAD ---------------------------------------------------------------------------------

def test_xread(d):
    fill(d, "s", 5)
    fill(d, "t", 2, start=3)
    d.check("SET", "str", "x")
    d.check("XDEL", "s", "5-1")
    for argv in (["STREAMS", "s", "0"], ["STREAMS", "s", "t", "0", "0"],
                 ["COUNT", "1", "STREAMS", "s", "t", "0", "0"], ["STREAMS", "s", "t", "1-1", "$"],
                 ["STREAMS", "s", "t", "4-1", "3"], ["STREAMS", "s", "4-1"], ["STREAMS", "s", "4"],
                 ["STREAMS", "s", "$"], ["STREAMS", "s", "s", "0", "2-1"],
                 ["COUNT", "-5", "STREAMS", "s", "0"], ["COUNT", "0", "STREAMS", "s", "0"],
                 ["COUNT", "2", "COUNT", "3", "STREAMS", "s", "0"],
                 ["count", "2", "block", "0", "streams", "s", "0"],
                 ["BLOCK", "10", "COUNT", "1", "STREAMS", "s", "t", "0", "$"],
                 ["STREAMS", "nokey", "0"], ["STREAMS", "nokey", "$"],
                 ["STREAMS", "s", f"{U64}-{U64}"],
                 ["STREAMS", "STREAMS", "0"], ["STREAMS", "s", "t", "nokey", "0", "0", "0"],
                 ["STREAMS", "s"], ["STREAMS"], ["COUNT", "1"], ["FOO", "STREAMS", "s", "0"],
                 ["COUNT", "x", "STREAMS", "s", "0"], ["BLOCK", "x", "STREAMS", "s", "0"],
                 ["BLOCK", "-1", "STREAMS", "s", "0"], ["BLOCK", "1.5", "STREAMS", "s", "0"],
                 ["STREAMS", "s", "-"], ["STREAMS", "s", "1-*"], ["STREAMS", "s", "(0"],
                 ["STREAMS", "s", ">"], ["NOACK", "STREAMS", "s", "0"],
                 ["GROUP", "g", "c", "STREAMS", "s", "0"], ["GROUP", "g", "STREAMS", "s", "0"],
                 ["GROUP", "g"], ["COUNT", "1", "GROUP", "g", "c", "STREAMS", "s", "0"],
                 ["STREAMS", "s", "str", "0", "0"], ["STREAMS", "str", "s", "0", "bad"],
                 ["STREAMS", "s", "str", "bad", "0"], ["STREAMS", "nokey", "str", "bad", "0"],
                 ["STREAMS", "str", "$"], ["BLOCK", "0", "STREAMS", "str", "0"]):
        d.check("XREAD", *argv)


def test_xread_blocking_timeout(differ):
    differ.check("XADD", "s", "1-1", "f", "v")
    differ.check("XREAD", "BLOCK", "30", "STREAMS", "s", "nokey", "$", "$")
    differ.check("XREAD", "BLOCK", "30", "STREAMS", "s", "1-1")
    differ.resp3()
    differ.check("XREAD", "BLOCK", "30", "STREAMS", "s", "$")


def test_xread_block_is_served(d, tidelog):
    readers = [Pair(d) for _ in range(3)]
    try:
        fill(d, "s", 2)
        readers[0].send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        readers[1].send("XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "t", "s", "$", "0")
        readers[2].send("XREAD", "BLOCK", "5000", "STREAMS", "a", "s", "t", "$", "$", "$")
        ours, theirs = readers[1].replies()  # served at once: s has entries after 0
        assert ours == theirs
        readers[1].send("XREAD", "BLOCK", "0", "STREAMS", "t", "s", "$", "$")
        wait_blocked(d, tidelog, 3)
        d.check("MULTI")
        d.check("XADD", "t", "1-1", "f", "v")
        d.check("XADD", "s", "3-1", "f", "v")
        d.check("XADD", "s", "4-1", "f", "v")
        d.check("EXEC")
        for reader in readers:
            ours, theirs = reader.replies()
            assert ours == theirs, (ours, theirs)
    finally:
        for reader in readers:
            reader.close()


def test_xread_block_on_a_key_named_twice(differ, tidelog):
    first, second = Pair(differ), Pair(differ)
    try:
        differ.check("XADD", "s", "5-1", "f", "v")
        first.send("XREAD", "BLOCK", "0", "STREAMS", "s", "s", "$", "9-0")
        second.send("XREAD", "BLOCK", "0", "STREAMS", "s", "s", "9-0", "$")
        wait_blocked(differ, tidelog, 2)
        differ.check("XADD", "s", "6-1", "f", "v")
        ours, theirs = first.replies()
        assert ours == theirs
        wait_blocked(differ, tidelog, 1)  # the second waits after 9-0
        differ.check("XADD", "s", "9-1", "f", "v")
        ours, theirs = second.replies()
        assert ours == theirs
    finally:
        first.close()
        second.close()


def test_xread_block_resp3_and_empty_serve(differ, tidelog):
    reader = Pair(differ)
    try:
        assert reader.call("HELLO", "3")[0].startswith(b"%")
        differ.check("XADD", "s", "1-1", "f", "v")
        reader.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        wait_blocked(differ, tidelog, 1)
        differ.check("MULTI")
        differ.check("XADD", "s", "2-1", "f", "v")
        differ.check("XDEL", "s", "2-1")
        differ.check("EXEC")
        ours, theirs = reader.replies()
        assert ours == theirs == b"%1\r\n$1\r\ns\r\n*0\r\n"
        reader.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        wait_blocked(differ, tidelog, 1)
        differ.check("XADD", "s", "MAXLEN", "0", "3-1", "f", "v")
        ours, theirs = reader.replies()
        assert ours == theirs
    finally:
        reader.close()


def test_xread_block_in_multi(d):
    fill(d, "s", 1)
    d.check("MULTI")
    d.check("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    d.check("XREAD", "BLOCK", "0", "STREAMS", "s", "0")
    d.check("XREAD", "BLOCK", "0", "STREAMS", "nokey", "0")
    d.check("EXEC")


def test_resp3(differ):
    differ.resp3()
    for node in (1, 100):
        differ.check("FLUSHALL")
        differ.check("CONFIG", "SET", "stream-node-max-entries", node)
        fill(differ, "s", 3)
        fill(differ, "t", 1)
        differ.check("XADD", "nokey", "NOMKSTREAM", "1-1", "f", "v")
        differ.check("XRANGE", "s", "-", "+")
        differ.check("XRANGE", "s", "-", "+", "COUNT", "0")
        differ.check("XRANGE", "nokey", "-", "+")
        differ.check("XREVRANGE", "s", "+", "-", "COUNT", "2")
        differ.check("XREAD", "STREAMS", "s", "t", "0", "0")
        differ.check("XREAD", "STREAMS", "s", "s", "0", "1-1")
        differ.check("XREAD", "COUNT", "1", "STREAMS", "s", "t", "nokey", "0", "$", "0")
        differ.check("XREAD", "STREAMS", "nokey", "0")
        differ.check("XLEN", "s")
        differ.check("XDEL", "s", "1-1")
        differ.check("XTRIM", "s", "MAXLEN", "~", "0")
        differ.check("XSETID", "s", "9-9")
        differ.check("XSETID", "nokey", "9-9")
        differ.check("XADD", "s", "1-1", "f", "v")


# -- node boundaries at the default byte limit ----------------------------------------------

@pytest.mark.parametrize("value_size", [1, 37, 300, 1500, 5000])
def test_approximate_trims_at_default_node_bytes(differ, value_size):
    """Node splits decided by stream-node-max-bytes 4096 (our byte accounting)."""
    differ.reset(node_entries=100, node_bytes=4096)
    rng = random.Random(value_size)
    for i in range(1, 301):
        value = "v" * rng.randint(max(1, value_size // 2), value_size)
        fields = ("f", value) if i % 5 else ("other", value, "g", str(i))
        differ.check("XADD", "s", f"{i}-{i % 3}", *fields)
        if i % 25 == 0:
            differ.check("XTRIM", "s", "MAXLEN", "~", 300 - i // 2)
            differ.check("XLEN", "s")
    for threshold in (250, 200, 120, 60, 10, 0):
        differ.check("XTRIM", "s", "MAXLEN", "~", threshold)
        differ.check("XLEN", "s")
        differ.check("XRANGE", "s", "-", "+", "COUNT", "1")
    differ.check("XADD", "t", "1-1", "f", "v")
    for i in range(2, 80):
        differ.check("XADD", "t", "MINID", "~", max(1, i - 20), f"{i}-1", "f", "x" * value_size)
        differ.check("XLEN", "t")


# -- a random walk -------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_random_walk(d, seed):
    """Seeded random XADD/XDEL/XTRIM/XRANGE/XREAD, every reply compared."""
    rng = random.Random(seed)
    ms, seq = 1, 0
    added: list[str] = []
    fields = [["f", "v"], ["f", "w"], ["a", "1", "b", "2"], ["f", "v", "g", "h"]]
    for _ in range(300):
        roll = rng.random()
        if roll < 0.45:
            if rng.random() < 0.3:
                ms, seq = ms + rng.randint(1, 3), 0
            else:
                seq += rng.randint(1, 2)
            trim = []
            if rng.random() < 0.3:
                how = rng.choice([[], ["="], ["~"]])
                if rng.random() < 0.5:
                    trim = ["MAXLEN", *how, rng.randint(0, 25)]
                else:
                    trim = ["MINID", *how, f"{max(1, ms - rng.randint(0, 6))}-{rng.randint(0, 3)}"]
                if how == ["~"] and rng.random() < 0.5:
                    trim += ["LIMIT", rng.randint(0, 12)]
            id = f"{ms}-{seq}" if rng.random() < 0.8 else f"{ms}-*"
            d.check("XADD", "s", *trim, id, *rng.choice(fields))
            added.append(f"{ms}-{seq}")
        elif roll < 0.6 and added:
            d.check("XDEL", "s", *rng.sample(added, min(len(added), rng.randint(1, 3))))
        elif roll < 0.7:
            how = rng.choice([[], ["="], ["~"]])
            if rng.random() < 0.5:
                args = ["MAXLEN", *how, rng.randint(0, 30)]
            else:
                args = ["MINID", *how, f"{max(1, ms - rng.randint(0, 8))}"]
            if how == ["~"] and rng.random() < 0.5:
                args += ["LIMIT", rng.randint(0, 10)]
            d.check("XTRIM", "s", *args)
        elif roll < 0.85:
            lo = rng.choice(["-", f"{rng.randint(1, ms)}",
                             f"({rng.randint(1, ms)}-{rng.randint(0, 3)}"])
            hi = rng.choice(["+", f"{rng.randint(1, ms)}",
                             f"({rng.randint(1, ms)}-{rng.randint(0, 3)}"])
            count = rng.choice([[], ["COUNT", rng.randint(1, 5)]])
            d.check("XRANGE", "s", lo, hi, *count)
            d.check("XREVRANGE", "s", hi, lo, *count)
        else:
            d.check("XREAD", "COUNT", rng.randint(0, 4), "STREAMS", "s",
                    f"{rng.randint(0, ms)}-{rng.randint(0, 3)}")
        if rng.random() < 0.1:
            d.check("XLEN", "s")
    dump(d, "s")


# -- deliberate differences -------------------------------------------------------------

def test_known_differences(differ):
    """Redis 7.4 features we have and 7.0.15 has not: both answers pinned."""
    differ.check("XADD", "s", "1-1", "f", "v")
    differ.check("XADD", "s", "2-1", "f", "w")
    ours = differ.ours.call("XREAD", "STREAMS", "s", "nokey", "+", "+")
    theirs = differ.theirs.call("XREAD", "STREAMS", "s", "nokey", "+", "+")
    assert ours == b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nw\r\n"
    assert theirs == b"-ERR Invalid stream ID specified as stream command argument\r\n"
    ours = differ.ours.call("XREAD", "STREAMS", "s", "t", "0")
    theirs = differ.theirs.call("XREAD", "STREAMS", "s", "t", "0")
    assert ours == (b"-ERR Unbalanced 'xread' list of streams: for each stream key an ID, "
                    b"'+', or '$' must be specified.\r\n")
    assert theirs == (b"-ERR Unbalanced XREAD list of streams: for each stream key an ID or "
                      b"'$' must be specified.\r\n")

    # <ms>-* when the last ID is <ms>-<max>: 7.0.15 forgets to set errno, so its
    # text depends on whatever errno was left (later Redis sets EDOM): usually
    # "too large", our text right after another "equal or smaller" error.
    differ.check("XADD", "x", "3-18446744073709551615", "f", "v")
    ours = differ.ours.call("XADD", "x", "3-*", "f", "v")
    theirs = differ.theirs.call("XADD", "x", "3-*", "f", "v")
    assert ours == (b"-ERR The ID specified in XADD is equal or smaller than the target "
                    b"stream top item\r\n")
    assert theirs in (ours, b"-ERR Elements are too large to be stored\r\n")
    differ.check("XADD", "x", "2-1", "f", "v")   # an EDOM error: errno is now EDOM
    differ.check("XADD", "x", "3-*", "f", "v")   # so both say "equal or smaller"
    differ.check("XLEN", "x")


# -- effects: what we propagate against Redis's AOF ---------------------------------------------

EFFECT_SCRIPT = [
    ["XADD", "s", "1-1", "f", "v"],
    ["XADD", "s", "1-*", "f", "v"],
    ["XADD", "s", "1-1", "f", "v"],                        # error: nothing
    ["XADD", "n", "NOMKSTREAM", "1-1", "f", "v"],          # nil: nothing
    *[["XADD", "s", f"{i}-1", "f", "v"] for i in range(2, 12)],
    ["XADD", "s", "MAXLEN", "~", "5", "12-1", "f", "v"],
    ["XADD", "s", "MAXLEN", "~", "3", "LIMIT", "2", "13-1", "f", "v"],
    ["XADD", "s", "MAXLEN", "=", "8", "14-*", "f", "v"],
    ["XADD", "s", "LIMIT", "4", "MINID", "~", "12", "NOMKSTREAM", "15-1", "f", "v"],
    ["XADD", "s", "MINID", "10", "16-1", "f", "v"],
    ["XDEL", "s", "99-1"],                                  # nothing
    ["XDEL", "s", "12-1", "99-1", "12-1"],
    ["XTRIM", "s", "MAXLEN", "100"],                        # nothing
    ["XTRIM", "s", "MAXLEN", "~", "100"],                   # nothing
    ["XTRIM", "s", "MAXLEN", "~", "2"],
    ["XTRIM", "s", "MINID", "~", "16"],
    ["XTRIM", "s", "MAXLEN", "=", "1"],
    ["XSETID", "s", "20-0"],
    ["XSETID", "s", "20-0", "ENTRIESADDED", "30", "MAXDELETEDID", "19-0"],
    ["XADD", "t", "MINID", "~", "100", "5-0", "f", "v"],    # empties t
    ["XADD", "u", "MAXLEN", "~", "0", "1-*", "f", "v"],
    ["XADD", "w", "1-0", "f", "v"], ["XADD", "w", "2-0", "f", "v"], ["XADD", "w", "3-0", "f", "v"],
    ["XDEL", "w", "1-0"],
    ["XSETID", "w", "1-0"],                                 # error: nothing
    ["XADD", "w", "MINID", "~", "3", "6-0", "f", "v"],      # first node still starts at 1-0
    ["XTRIM", "w", "MINID", "3"],
    ["XADD", "w", "MINID", "~", "3", "7-0", "f", "v"],
    ["XTRIM", "w", "MINID", "~", "9"],
    ["MULTI"], ["XADD", "m", "1-1", "f", "v"], ["XADD", "m", "MAXLEN", "~", "0", "2-*", "f", "v"],
    ["EXEC"],
    ["MULTI"], ["XDEL", "m", "9-9"], ["XADD", "m", "3-*", "f", "v"], ["EXEC"],
    ["XREAD", "STREAMS", "s", "0"], ["XRANGE", "s", "-", "+"], ["XLEN", "s"],
]


@pytest.mark.parametrize("node_entries", [1, 2, 100])
def test_effects_match_redis_aof(tidelog, aof_oracle, node_entries):
    theirs = RawClient(aof_oracle.port)
    ours = RawClient(tidelog.port)
    try:
        for client in (ours, theirs):
            assert client.call("FLUSHALL") == b"+OK\r\n"
            assert client.call("CONFIG", "SET", "stream-node-max-entries",
                               node_entries) == b"+OK\r\n"
            assert client.call("CONFIG", "SET", "stream-node-max-bytes", 0) == b"+OK\r\n"
        before = len(read_aof_commands(aof_oracle.dir))
        with captured_effects(tidelog) as captured:
            for argv in EFFECT_SCRIPT:
                assert ours.call(*argv) == theirs.call(*argv), argv
            written = [argv for argv in read_aof_commands(aof_oracle.dir)[before:]
                       if argv[0].upper() != b"SELECT"]
            got = tidelog.call(lambda: list(captured))
        assert got == written
    finally:
        ours.close()
        theirs.close()
