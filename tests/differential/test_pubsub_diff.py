"""Pub/Sub against redis-server 7.0.15: subscribers on extra connections
(``Pair``: one to each server), publishers on the differ's own, raw reply
bytes compared for every confirmation, message and error, in RESP2 and RESP3.

No waiting on time: a subscriber's messages are read until the reply of a
PING sent after them (``drain``), so a message too many or too few shows.
Redis keeps channels in hash tables, so where it lists several names (PUBSUB
CHANNELS, UNSUBSCRIBE of everything) the order is its hash order: those
replies are compared as sets.  Each test uses channel names of its own;
servers are shared, and a closed subscriber leaves a little later
(``wait_gone``)."""

from __future__ import annotations

import re
import time

import pytest

from tests.support.differ_tools import Pair, parse
from tests.support.rawclient import encode_command

PONG2 = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"  # PING's reply in RESP2 subscribed mode
CONTEXT = (b"-ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
           b"are allowed in this context\r\n")


QUIET = re.compile(rb"pubsub\w*:(\d+)")


def wait_quiet(differ) -> None:
    """Until no subscription is left on either server (an earlier test's
    subscribers leave asynchronously once closed)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        counts = [QUIET.findall(c.call("INFO", "stats")) for c in (differ.ours, differ.theirs)]
        if counts[0] == counts[1] == [b"0", b"0", b"0"]:
            return
        time.sleep(0.01)
    raise AssertionError(f"subscriptions left: ours {counts[0]}, theirs {counts[1]}")


@pytest.fixture
def pairs(differ):
    wait_quiet(differ)
    opened: list[Pair] = []

    def make(resp3: bool = False) -> Pair:
        pair = Pair(differ)
        if resp3:
            for client in (pair.ours, pair.theirs):
                assert client.call("HELLO", "3").startswith(b"%")
        opened.append(pair)
        return pair

    yield make
    for pair in opened:
        pair.close()


def same(pair: Pair, *argv, replies: int = 1) -> list[bytes]:
    """Send argv on both servers, read ``replies`` replies each, all identical."""
    pair.send(*argv)
    out = []
    for _ in range(replies):
        ours, theirs = pair.replies()
        assert ours == theirs, f"\ncommand: {argv!r}\ntidelog: {ours!r}\nredis:   {theirs!r}"
        out.append(ours)
    return out


def drain(pair: Pair, pong: bytes = PONG2) -> list[bytes]:
    """Everything a subscriber received before the reply of a PING sent now
    (identical on both servers), the PING's reply left out."""
    pair.send("PING")
    got = []
    while True:
        ours, theirs = pair.replies()
        assert ours == theirs, f"\ntidelog: {ours!r}\nredis:   {theirs!r}\nbefore: {got!r}"
        if ours == pong:
            return got
        got.append(ours)


def same_in_any_order(pair: Pair, *argv, replies: int) -> None:
    """Send argv (an UNSUBSCRIBE of everything), read ``replies``
    confirmations each: the same names in any order (Redis walks a hash
    table), the same counts in the same order."""
    pair.send(*argv)
    got = [pair.replies() for _ in range(replies)]
    ours = [parse(o) for o, _ in got]
    theirs = [parse(t) for _, t in got]
    assert sorted(r[1] for r in ours) == sorted(r[1] for r in theirs), (ours, theirs)
    assert [r[::2] for r in ours] == [r[::2] for r in theirs], (ours, theirs)


def wait_gone(differ, *channels: str) -> None:
    """Until neither server counts a subscriber of ``channels`` (closed
    connections leave asynchronously)."""
    want = differ.theirs.call("PUBSUB", "NUMSUB", *channels)
    zero = b"".join(b"$%d\r\n%s\r\n:0\r\n" % (len(c), c.encode()) for c in channels)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        ours = differ.ours.call("PUBSUB", "NUMSUB", *channels)
        want = differ.theirs.call("PUBSUB", "NUMSUB", *channels)
        if ours == want and want.endswith(zero):
            return
        time.sleep(0.01)
    raise AssertionError(f"subscribers left: ours {ours!r}, theirs {want!r}")


def message(channel: bytes, payload: bytes) -> bytes:
    return b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(channel), channel, len(payload), payload)


# -- SUBSCRIBE, PUBLISH, UNSUBSCRIBE ------------------------------------------------
def test_subscribe_publish_unsubscribe(differ, pairs):
    sub = pairs()
    assert same(sub, "SUBSCRIBE", "t1.a", "t1.b", replies=2) == [
        b"*3\r\n$9\r\nsubscribe\r\n$4\r\nt1.a\r\n:1\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$4\r\nt1.b\r\n:2\r\n"]
    same(sub, "SUBSCRIBE", "t1.a")                      # again: the count stays
    assert differ.check("PUBLISH", "t1.a", "hello") == b":1\r\n"
    differ.check("PUBLISH", "t1.b", "")
    differ.check("PUBLISH", "t1.c", "nobody")
    differ.check("PUBLISH", "T1.A", "case matters")
    assert drain(sub) == [message(b"t1.a", b"hello"), message(b"t1.b", b"")]
    differ.check("PUBSUB", "NUMSUB", "t1.a", "t1.b", "t1.c")
    same(sub, "UNSUBSCRIBE", "t1.a", "t1.zz", replies=2)  # one never subscribed
    same(sub, "UNSUBSCRIBE")                              # the rest: t1.b
    same(sub, "UNSUBSCRIBE")                              # none left: nil, 0
    same(sub, "PUNSUBSCRIBE")
    same(sub, "SUNSUBSCRIBE")
    same(sub, "GET", "k")                                 # no longer in subscribed mode
    differ.check("PUBLISH", "t1.a", "gone")


def test_unsubscribe_everything(differ, pairs):
    sub = pairs()
    same(sub, "SUBSCRIBE", "t2.a", "t2.b", "t2.c", replies=3)
    same(sub, "PSUBSCRIBE", "t2.*")
    same_in_any_order(sub, "UNSUBSCRIBE", replies=3)
    same(sub, "PUNSUBSCRIBE")
    same(sub, "SET", "k", "v")


def test_every_receiver_counts(differ, pairs):
    """A client subscribed to a channel and to a pattern matching it gets
    both messages, and PUBLISH counts both."""
    one, two = pairs(), pairs()
    same(one, "SUBSCRIBE", "t3.x")
    same(one, "PSUBSCRIBE", "t3.*")
    same(two, "SUBSCRIBE", "t3.x")
    assert differ.check("PUBLISH", "t3.x", "m") == b":3\r\n"
    assert drain(one) == [message(b"t3.x", b"m"),
                          b"*4\r\n$8\r\npmessage\r\n$4\r\nt3.*\r\n$4\r\nt3.x\r\n$1\r\nm\r\n"]
    assert drain(two) == [message(b"t3.x", b"m")]
    differ.check("PUBLISH", "t3.y", "p")
    assert len(drain(one)) == 1
    assert drain(two) == []


@pytest.mark.parametrize("pattern", [
    "*", "t4.*", "t4.?", "t4.[ab]", "t4.[^a]", "t4.[a-c]", "t4.[c-a]", "t4.\\*", "t4\\.a",
    "t4.a*", "*a", "t4.[", "t4.[a", "t4.\\", "T4.A", "t4.a\\", "t4.[\\]]", "", "**a",
])
def test_pattern_matching(differ, pairs, pattern):
    psub = pairs()
    same(psub, "PSUBSCRIBE", pattern)
    for channel in ["t4.a", "t4.b", "t4.c", "t4.*", "t4.", "t4.ab", "t4.[", "t4.]", "t4.\\",
                    "t4.a\\", "", "xa", "t4.[a"]:
        differ.check("PUBLISH", channel, "m")
    drain(psub)
    same(psub, "PUNSUBSCRIBE", pattern)


def test_closed_subscriber_leaves(differ, pairs):
    sub = pairs()
    same(sub, "SUBSCRIBE", "t5.a")
    same(sub, "PSUBSCRIBE", "t5.*")
    same(sub, "SSUBSCRIBE", "t5.s")
    sub.close()
    wait_gone(differ, "t5.a")
    differ.check("PUBLISH", "t5.a", "m")
    differ.check("SPUBLISH", "t5.s", "m")
    differ.check("PUBSUB", "SHARDNUMSUB", "t5.s")


# -- sharded channels -------------------------------------------------------------------
def test_shard_channels(differ, pairs):
    sub = pairs()
    same(sub, "SSUBSCRIBE", "t6.a", "t6.b", replies=2)
    same(sub, "SUBSCRIBE", "t6.a")                  # a count of its own: 1
    same(sub, "SSUBSCRIBE", "t6.c")                 # 3
    assert differ.check("SPUBLISH", "t6.a", "s") == b":1\r\n"
    assert differ.check("PUBLISH", "t6.b", "p") == b":0\r\n"   # their own namespace
    differ.check("PUBLISH", "t6.a", "p")
    assert drain(sub) == [b"*3\r\n$8\r\nsmessage\r\n$4\r\nt6.a\r\n$1\r\ns\r\n",
                          message(b"t6.a", b"p")]
    differ.check("PUBSUB", "SHARDNUMSUB", "t6.a", "t6.b", "t6.x")
    differ.check("PUBSUB", "SHARDNUMSUB")
    differ.check("PUBSUB", "NUMSUB", "t6.b")
    same(sub, "SUNSUBSCRIBE", "t6.a", "t6.x", replies=2)
    same(sub, "UNSUBSCRIBE", "t6.a")               # 0 channels, still 2 shard channels
    same(sub, "GET", "k")                          # still in subscribed mode
    same_in_any_order(sub, "SUNSUBSCRIBE", replies=2)
    same(sub, "SUNSUBSCRIBE")
    same(sub, "GET", "k")


def test_ssubscribe_inside_multi(differ, pairs):
    client = pairs()
    same(client, "MULTI")
    same(client, "SSUBSCRIBE", "t7.s")
    same(client, "PSUBSCRIBE", "t7.*")
    same(client, "EXEC")
    drain(client)


def test_subscribe_inside_multi(differ, pairs):
    """EXEC's array counts commands; SUBSCRIBE of two channels writes two
    replies inside it, as Redis does."""
    client = pairs()
    same(client, "MULTI")
    same(client, "SUBSCRIBE", "t8.a", "t8.b")
    same(client, "EXEC", replies=2)
    assert drain(client) == []
    differ.check("PUBLISH", "t8.b", "m")
    assert drain(client) == [message(b"t8.b", b"m")]


# -- subscribed mode (RESP2) ----------------------------------------------------------
def test_subscribed_mode_refusals(differ, pairs):
    sub = pairs()
    same(sub, "SUBSCRIBE", "t9.a")
    for argv, name in [(["GET", "k"], b"get"), (["MULTI"], b"multi"), (["CLIENT", "ID"], b"client|id"),
                       (["PUBLISH", "t9.a", "x"], b"publish"), (["HELLO", "3"], b"hello"),
                       (["pubsub", "numpat"], b"pubsub|numpat"), (["Echo", "x"], b"echo"),
                       (["INFO"], b"info"), (["SELECT", "1"], b"select")]:
        assert same(sub, *argv) == [CONTEXT % name]
    same(sub, "PING")
    same(sub, "PING", "hi")
    same(sub, "PING", "a", "b")                     # arity first
    same(sub, "NOSUCHCOMMAND")                      # unknown first
    same(sub, "GET")
    same(sub, "PSUBSCRIBE", "t9.*")
    same(sub, "SSUBSCRIBE", "t9.s")
    same(sub, "QUIT")


def test_reset_drops_subscriptions(differ, pairs):
    sub = pairs()
    same(sub, "SUBSCRIBE", "t10.a")
    same(sub, "PSUBSCRIBE", "t10.*")
    same(sub, "SSUBSCRIBE", "t10.s")
    same(sub, "RESET")
    differ.check("PUBSUB", "NUMSUB", "t10.a")
    differ.check("PUBSUB", "SHARDNUMSUB", "t10.s")
    differ.check("PUBLISH", "t10.a", "m")
    same(sub, "PING")
    same(sub, "GET", "k")


# -- RESP3 -------------------------------------------------------------------------------
def test_resp3_push_frames(differ, pairs):
    sub = pairs(resp3=True)
    assert same(sub, "SUBSCRIBE", "t11.a", "t11.b", replies=2)[0] == (
        b">3\r\n$9\r\nsubscribe\r\n$5\r\nt11.a\r\n:1\r\n")
    same(sub, "PSUBSCRIBE", "t11.*")
    same(sub, "SSUBSCRIBE", "t11.s")
    same(sub, "GET", "k")                            # no restriction in RESP3
    same(sub, "SET", "k", "v")
    same(sub, "PING")
    differ.check("PUBLISH", "t11.a", "m")
    differ.check("SPUBLISH", "t11.s", "m")
    assert len(drain(sub, b"+PONG\r\n")) == 3
    # Publishing to itself: the message comes before PUBLISH's reply, also
    # behind other pipelined replies.
    sub.send("ECHO", "first")
    sub.send("PUBLISH", "t11.b", "self")
    sub.send("ECHO", "last")
    for _ in range(5):
        ours, theirs = sub.replies()
        assert ours == theirs
    assert drain(sub, b"+PONG\r\n") == []
    same(sub, "UNSUBSCRIBE", "t11.a")
    same(sub, "PUNSUBSCRIBE", "t11.*")
    same(sub, "SUNSUBSCRIBE", "t11.s")
    same(sub, "UNSUBSCRIBE")
    same(sub, "UNSUBSCRIBE")


def test_resp3_publisher_and_resp2_subscriber(differ, pairs):
    sub = pairs()
    pub = pairs(resp3=True)
    same(sub, "SUBSCRIBE", "t12.a")
    same(pub, "PUBLISH", "t12.a", "m")
    assert drain(sub) == [message(b"t12.a", b"m")]


# -- PUBSUB introspection -----------------------------------------------------------------
def test_pubsub_introspection(differ, pairs):
    one, two = pairs(), pairs()
    same(one, "SUBSCRIBE", "t13.a", "t13.b", "t13.xyz", replies=3)
    same(two, "SUBSCRIBE", "t13.a")
    same(one, "PSUBSCRIBE", "t13.*", "t13.?", replies=2)
    same(two, "PSUBSCRIBE", "t13.*")
    same(two, "SSUBSCRIBE", "t13.s")
    for argv in [("CHANNELS",), ("SHARDCHANNELS",), ("CHANNELS", "t13.*"), ("CHANNELS", "t13.?"),
                 ("CHANNELS", "nothing*"), ("SHARDCHANNELS", "t13.*"), ("SHARDCHANNELS", "t13.x")]:
        ours, theirs = differ.ours.call("PUBSUB", *argv), differ.theirs.call("PUBSUB", *argv)
        assert sorted(parse(ours)) == sorted(parse(theirs)), argv
    differ.check("PUBSUB", "NUMSUB", "t13.a", "t13.b", "t13.*", "nothing")
    differ.check("PUBSUB", "NUMSUB")
    differ.check("PUBSUB", "NUMPAT")
    differ.check("pubsub", "help")
    for argv in [("PUBSUB",), ("PUBSUB", "nope"), ("PUBSUB", "CHANNELS", "a", "b"),
                 ("PUBSUB", "SHARDCHANNELS", "a", "b"), ("PUBSUB", "NUMPAT", "x"),
                 ("PUBSUB", "HELP", "x"), ("SUBSCRIBE",), ("PSUBSCRIBE",), ("SSUBSCRIBE",),
                 ("PUBLISH", "a"), ("PUBLISH", "a", "b", "c"), ("SPUBLISH", "a")]:
        differ.check(*argv)


def test_info_and_client_list(differ, pairs):
    one = pairs()
    differ.check("CLIENT", "LIST", "TYPE", "pubsub")  # nobody
    same(one, "SUBSCRIBE", "t14.a", "t14.b", replies=2)
    same(one, "PSUBSCRIBE", "t14.*")
    same(one, "SSUBSCRIBE", "t14.s")
    three = pairs(resp3=True)
    same(three, "SUBSCRIBE", "t14.c")
    fields = re.compile(rb"flags=\S+ db=\d+ sub=\d+ psub=\d+ ssub=\d+ multi=-?\d+")
    for pair in (one, three):
        ids = [int(client.call("CLIENT", "ID")[1:-2]) if pair is three else None
               for client in (pair.ours, pair.theirs)]
        if pair is one:  # a RESP2 subscriber cannot ask its own id: find it by type
            lists = [c.call("CLIENT", "LIST", "TYPE", "pubsub") for c in (differ.ours, differ.theirs)]
        else:
            lists = [c.call("CLIENT", "LIST", "ID", i) for c, i in zip((differ.ours, differ.theirs), ids)]
        ours, theirs = (sorted(fields.findall(x)) for x in lists)
        assert ours == theirs and len(ours) == (2 if pair is one else 1), (ours, theirs)
    stats = re.compile(rb"pubsub\w*:\d+")
    ours, theirs = (stats.findall(c.call("INFO", "stats")) for c in (differ.ours, differ.theirs))
    assert ours == theirs
    assert len(ours) == 3


def test_pipelined_burst_in_subscribed_mode(differ, pairs):
    """A pipelined XADD burst (which Tidelog may run as one call) is refused
    call by call, like any other command."""
    differ.ours.call("XADD", "s", "1-1", "f", "v")   # Tidelog now knows XADD runs
    differ.theirs.call("XADD", "s", "1-1", "f", "v")
    sub = pairs()
    same(sub, "SUBSCRIBE", "t15.a")
    burst = encode_command(["XADD", "s", "*", "f", "v"]) * 3
    sub.ours.send_raw(burst)
    sub.theirs.send_raw(burst)
    for _ in range(3):
        ours, theirs = sub.replies()
        assert ours == theirs == CONTEXT % b"xadd"
    differ.check("XLEN", "s")


PUBSUB_COMMANDS = ["subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe",
                   "sunsubscribe", "publish", "spublish", "pubsub|channels",
                   "pubsub|numpat", "pubsub|numsub", "pubsub|shardchannels",
                   "pubsub|shardnumsub", "pubsub|help"]


@pytest.mark.parametrize("name", PUBSUB_COMMANDS)
def test_command_info(differ, name):
    differ.check("COMMAND", "INFO", name)


def test_command_info_container(differ):
    """The container lists its subcommands in Redis's hash order: compared as sets."""
    ours, theirs = (parse(c.call("COMMAND", "INFO", "pubsub"))[0]
                    for c in (differ.ours, differ.theirs))
    assert ours[:9] == theirs[:9]
    assert sorted(ours[9], key=repr) == sorted(theirs[9], key=repr)


@pytest.mark.parametrize("name", ["pubsub|numpat", "pubsub|help"])
def test_command_docs(differ, name):
    differ.check("COMMAND", "DOCS", name)   # no arguments: the whole reply compares


def test_command_getkeys(differ):
    differ.check("COMMAND", "GETKEYS", "spublish", "ch", "m")
    differ.check("COMMAND", "GETKEYS", "ssubscribe", "a", "b")
    differ.check("COMMAND", "GETKEYS", "publish", "ch", "m")
    differ.check("COMMAND", "GETKEYSANDFLAGS", "sunsubscribe", "a")


@pytest.mark.parametrize("resp3", [False, True])
def test_publish_to_itself_inside_multi(differ, pairs, resp3):
    """The message goes inside EXEC's array, before PUBLISH's count."""
    client = pairs(resp3=resp3)
    if resp3:
        same(client, "SUBSCRIBE", "t16.a")
    same(client, "MULTI")
    if not resp3:
        same(client, "SUBSCRIBE", "t16.a")   # RESP2: subscribed from here on
    same(client, "PUBLISH", "t16.a", "in")
    same(client, "PING")
    same(client, "EXEC", replies=2)   # the array "ends" early: one frame more follows
    assert drain(client, b"+PONG\r\n" if resp3 else PONG2) == []


def test_client_kill_type_pubsub(differ, pairs):
    sub = pairs()
    same(sub, "SUBSCRIBE", "t17.a")
    assert differ.check("CLIENT", "KILL", "TYPE", "pubsub") == b":1\r\n"
    wait_gone(differ, "t17.a")
    differ.check("CLIENT", "KILL", "TYPE", "pubsub")
