"""HyperLogLog against redis-server 7.0.15, byte for byte: the replies, and
the string of every HLL key (GET) after each write -- the header's cached
count and its stale bit, the sparse opcodes as Redis splits and merges
them, the promotion to dense at ``hll-sparse-max-bytes``, PFMERGE's
result in either encoding -- and the answers to corrupt strings.  A seeded
random run of 5,000 commands closes."""

from __future__ import annotations

import random

import pytest

from tests.support.differ_tools import assert_effects_match_aof
from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential

HEADER_SPARSE = b"HYLL\x01\x00\x00\x00" + bytes(8)
HEADER_DENSE = b"HYLL\x00\x00\x00\x00" + bytes(8)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(differ, request):
    if request.param == 3:
        differ.resp3()
    yield differ
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "hll-sparse-max-bytes", "3000") == b"+OK\r\n"


def check(d, *argv, keys=()) -> bytes:
    """One command on both, then the string at each key compared."""
    reply = d.check(*argv)
    for key in keys:
        d.check("GET", key)
    return reply


def elements(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def test_pfadd_pfcount_and_the_cached_count(d):
    check(d, "PFADD", "h", keys=["h"])                  # made, empty
    check(d, "PFCOUNT", "h", keys=["h"])                # count cached
    check(d, "PFADD", "h", keys=["h"])                  # nothing added: 0
    check(d, "PFADD", "h", "a", "b", "c", keys=["h"])
    check(d, "PFADD", "h", "a", keys=["h"])
    check(d, "PFCOUNT", "h", keys=["h"])
    check(d, "PFCOUNT", "h", keys=["h"])                # from the cache
    check(d, "PFADD", "h", "", "d", keys=["h"])
    check(d, "PFCOUNT", "h", "missing")
    check(d, "PFCOUNT", "missing")
    check(d, "PFCOUNT", "missing", "other")
    check(d, "PFCOUNT", "h", "h")
    check(d, "EXISTS", "missing")
    check(d, "OBJECT", "ENCODING", "h")
    check(d, "TYPE", "h")
    check(d, "STRLEN", "h")


def test_counts_at_many_sizes_in_both_encodings(d):
    for n in (1, 2, 3, 10, 100, 300, 1000, 3000, 5000, 20000):
        d.check("DEL", "s", "x")
        d.check("PFADD", "s", *elements(f"n{n}-", n))
        d.check("PFCOUNT", "s")
        d.check("GET", "s")
        d.check("PFDEBUG", "ENCODING", "s")
        d.check("PFMERGE", "x", "s")
        d.check("PFDEBUG", "TODENSE", "x")
        d.check("PFCOUNT", "x")
        d.check("GET", "x")


def test_sparse_grows_then_turns_dense_element_by_element(d):
    for max_bytes in ("3000", "100"):
        d.check("CONFIG", "SET", "hll-sparse-max-bytes", max_bytes)
        d.check("DEL", "h")
        d.check("PFDEBUG", "ENCODING", "h")             # no such key
        check(d, "PFADD", "h", keys=["h"])
        i = 0
        while d.check("PFDEBUG", "ENCODING", "h") == b"+sparse\r\n":
            check(d, "PFADD", "h", f"e{i}", keys=["h"])
            if i % 97 == 0:
                check(d, "PFCOUNT", "h", keys=["h"])
            i += 1
        assert i > (1500 if max_bytes == "3000" else 20)
        check(d, "PFADD", "h", "after", keys=["h"])


@pytest.mark.parametrize("max_bytes", ["0", "1", "16", "20", "64", "500", "12000"])
def test_sparse_max_bytes_settings(d, max_bytes):
    d.check("CONFIG", "SET", "hll-sparse-max-bytes", max_bytes)
    d.check("CONFIG", "GET", "hll-sparse-max-bytes")
    check(d, "PFADD", "h", "first", keys=["h"])
    for i in range(40):
        check(d, "PFADD", "h", *elements(f"{i}-", 1 + i * 3), keys=["h"])
        check(d, "PFDEBUG", "ENCODING", "h")
    check(d, "PFMERGE", "m", "h", keys=["m"])
    check(d, "PFADD", "a", *elements("a", 30), keys=["a"])
    check(d, "PFADD", "b", *elements("b", 30), keys=["b"])
    check(d, "PFMERGE", "c", "a", "b", keys=["c"])
    check(d, "PFCOUNT", "c", keys=["c"])


def test_config_hll_sparse_max_bytes(d):
    for value in ("3000", "1kb", "0", "-1", "abc", "9223372036854775807",
                  "9223372036854775808", "2gb", "3000"):
        d.check("CONFIG", "SET", "hll-sparse-max-bytes", value)
        d.check("CONFIG", "GET", "hll-sparse-max-bytes")
    d.check("CONFIG", "GET", "hll-*")


def test_pfmerge_of_mixed_encodings(d):
    check(d, "PFADD", "s1", *elements("x", 20), keys=["s1"])
    check(d, "PFADD", "s2", *elements("y", 50), keys=["s2"])
    check(d, "PFADD", "big", *elements("z", 4000), keys=["big"])
    check(d, "PFDEBUG", "ENCODING", "big")
    check(d, "PFMERGE", "new", "s1", "s2", keys=["new"])            # sparse into a new key
    check(d, "PFDEBUG", "ENCODING", "new")
    check(d, "PFMERGE", "nd", "s1", "big", keys=["nd"])             # a dense source: dense
    check(d, "PFMERGE", "s1", "s2", keys=["s1"])                    # into an existing sparse
    check(d, "PFMERGE", "s2", "big", keys=["s2"])                   # sparse made dense
    check(d, "PFMERGE", "big", "s1", "missing", keys=["big"])       # into a dense
    check(d, "PFMERGE", "alone", keys=["alone"])                    # nothing: an empty HLL
    check(d, "PFMERGE", "none", "missing1", "missing2", keys=["none"])
    check(d, "PFMERGE", "s1", keys=["s1"])                          # itself only
    check(d, "PFMERGE", "s1", "s1", "s1", keys=["s1"])
    check(d, "PFCOUNT", "s1", "s2", "big", "new", "nd", "missing")
    for key in ("new", "nd", "s1", "s2", "big", "alone", "none"):
        check(d, "PFCOUNT", key, keys=[key])
        d.check("OBJECT", "ENCODING", key)
    # many small sparse sources merged into one: the sparse merge path end to end
    for i in range(12):
        d.check("PFADD", f"p{i}", *elements(f"p{i}-", 25 * i + 1))
    check(d, "PFMERGE", "all", *[f"p{i}" for i in range(12)], keys=["all"])
    d.check("CONFIG", "SET", "hll-sparse-max-bytes", "200")
    check(d, "PFMERGE", "all2", *[f"p{i}" for i in range(12)], keys=["all2"])
    check(d, "PFCOUNT", "all2", keys=["all2"])


def test_a_redis_built_hll_set_into_both(d):
    """Strings built by redis-server, stored in both with SET: the same
    counts, the same updates, the same bytes."""
    d.theirs.call("PFADD", "src", *elements("r", 700))
    d.theirs.call("PFADD", "srcd", *elements("q", 9000))
    for key in ("src", "srcd"):
        raw = d.theirs.call("GET", key)
        value = raw[raw.index(b"\r\n") + 2:-2]
        d.theirs.call("DEL", key)
        d.check("SET", key, value)
        check(d, "OBJECT", "ENCODING", key)
        check(d, "PFCOUNT", key, keys=[key])
        check(d, "PFADD", key, *elements("more", 50), keys=[key])
        check(d, "PFCOUNT", key, keys=[key])
    check(d, "PFCOUNT", "src", "srcd")


def test_dump_restore_between_the_servers(d):
    d.theirs.call("PFADD", "h", *elements("a", 900))
    payload = d.theirs.call("DUMP", "h")
    value = payload[payload.index(b"\r\n") + 2:-2]
    assert d.ours.call("RESTORE", "h", "0", value) == b"+OK\r\n"
    check(d, "PFCOUNT", "h", keys=["h"])
    d.ours.call("PFADD", "o", *elements("b", 50))
    ours = d.ours.call("DUMP", "o")
    value = ours[ours.index(b"\r\n") + 2:-2]
    assert d.theirs.call("RESTORE", "o", "0", value) == b"+OK\r\n"
    check(d, "PFCOUNT", "o", keys=["o"])


def test_embstr_short_hll_becomes_raw(d):
    check(d, "PFADD", "h", "a", keys=["h"])
    raw = d.theirs.call("GET", "h")
    value = raw[raw.index(b"\r\n") + 2:-2]
    for command in (["PFADD", "k"], ["PFCOUNT", "k"], ["PFDEBUG", "ENCODING", "k"],
                    ["PFCOUNT", "k", "h"], ["PFMERGE", "k"], ["PFMERGE", "x", "k"]):
        d.check("SET", "k", value)
        d.check("OBJECT", "ENCODING", "k")
        check(d, *command, keys=["k"])
        d.check("OBJECT", "ENCODING", "k")


def test_which_commands_touch_a_watched_key(d):
    """WATCH fails after PFADD that changed a register and after PFCOUNT
    that stored a fresh count; not after PFADD that changed nothing, a
    cached PFCOUNT, or PFDEBUG TODENSE (Redis changes the string without
    signalling the key)."""
    check(d, "PFADD", "h", "a")
    others = [RawClient(client.sock.getpeername()[1]) for client in (d.ours, d.theirs)]
    try:
        for argv in (["PFDEBUG", "TODENSE", "h"], ["PFADD", "h", "a"], ["PFCOUNT", "h", "x"],
                     ["PFADD", "h", "b"], ["PFCOUNT", "h"], ["PFCOUNT", "h"],
                     ["PFDEBUG", "GETREG", "h"], ["PFMERGE", "h"]):
            d.check("WATCH", "h")
            assert others[0].call(*argv) == others[1].call(*argv)
            d.check("MULTI")
            d.check("GET", "h")
            d.check("EXEC")
    finally:
        for other in others:
            other.close()


def _sparse(*opcodes: int) -> bytes:
    return HEADER_SPARSE + bytes(opcodes)


def _xzero(n: int) -> list[int]:
    n -= 1
    return [0x40 | (n >> 8), n & 0xFF]


CORRUPT = {
    "short": b"HYLL\x01",
    "magic": b"HYLX" + HEADER_SPARSE[4:] + b"\x7f\xff",
    "encoding2": b"HYLL\x02" + HEADER_SPARSE[5:] + b"\x7f\xff",
    "dense_short": HEADER_DENSE + bytes(100),
    "dense_long": HEADER_DENSE + bytes(12289),
    "too_few": _sparse(*_xzero(16000)),
    "too_many": _sparse(*_xzero(16384), 0x00),
    "val_past_end": _sparse(*_xzero(16384), 0x80),
    "val_over": _sparse(*_xzero(16383), 0x83),
    "cut_xzero": _sparse(*_xzero(16000), 0x41),
    "cut_xzero_exact": _sparse(*_xzero(16384 - 257), 0x41),
    "empty_body": HEADER_SPARSE,
    "number": b"12345678901234567890",
    "stale_header": b"HYLL\x01\x00\x00\x00" + b"\x05\x00\x00\x00\x00\x00\x00\x00" + b"\x7f\xff",
    "valid_cache_lie": b"HYLL\x01\x00\x00\x00" + b"\x05\x00\x00\x00\x00\x00\x00\x00" + b"\x7f\xff",
    "stale_with_notused": b"HYLL\x01\x07\x08\x09" + bytes(7) + b"\x80" + b"\x7f\xff",
    "dense_high_registers": HEADER_DENSE[:15] + b"\x80" + b"\xff" * 12288,
    "dense_mixed": HEADER_DENSE[:15] + b"\x80" + bytes(range(256)) * 48,
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_and_odd_strings(d, name):
    value = CORRUPT[name]
    for command in (["PFCOUNT", "k"], ["PFCOUNT", "k", "other"], ["PFADD", "k"],
                    ["PFADD", "k", "a"], ["PFADD", "k", "a", "b", "c", "d", "e", "f"],
                    ["PFMERGE", "k", "other"], ["PFMERGE", "dst", "k"],
                    ["PFDEBUG", "GETREG", "k"], ["PFDEBUG", "DECODE", "k"],
                    ["PFDEBUG", "ENCODING", "k"], ["PFDEBUG", "TODENSE", "k"],
                    ["PFCOUNT", "k"]):
        d.check("DEL", "k", "dst", "other")
        d.check("PFADD", "other", "x", "y")
        d.check("SET", "k", value)
        check(d, *command, keys=["k", "dst"])
    d.check("SET", "k", value)
    for i in range(60):
        check(d, "PFADD", "k", f"e{i}", keys=["k"])
    check(d, "PFCOUNT", "k", keys=["k"])


def test_wrong_types_and_arity(d):
    d.check("RPUSH", "list", "a")
    d.check("SET", "str", "not an hll at all")
    for key in ("list", "str"):
        d.check("PFADD", key, "a")
        d.check("PFCOUNT", key)
        d.check("PFCOUNT", "missing", key)
        d.check("PFMERGE", "dst", key)
        d.check("PFMERGE", key, "missing")
        d.check("PFDEBUG", "GETREG", key)
        d.check("EXISTS", "dst")
    d.check_all([
        ["PFADD"], ["PFCOUNT"], ["PFMERGE"], ["PFDEBUG"], ["PFDEBUG", "GETREG"],
        ["PFDEBUG", "GETREG", "k", "x"], ["PFSELFTEST", "x"],
        ["PFDEBUG", "GETREG", "missing"], ["PFDEBUG", "nosuch", "missing"],
    ])
    d.check("PFADD", "h", "a")
    d.check_all([
        ["PFDEBUG", "nosuch", "h"], ["PFDEBUG", "no\r\nline", "h"], ["pfdebug", "encoding", "h"],
        ["PFDEBUG", "DECODE", "h"], ["PFDEBUG", "GETREG", "h"], ["PFDEBUG", "DECODE", "h"],
        ["PFDEBUG", "TODENSE", "h"], ["PFDEBUG", "TODENSE", "h"], ["GET", "h"],
    ])


@pytest.mark.parametrize("name", ["pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"])
def test_command_info(d, name):
    d.check("COMMAND", "INFO", name)
    d.check("COMMAND", "GETKEYS", "PFCOUNT", "a", "b")
    d.check("COMMAND", "GETKEYS", "PFMERGE", "a", "b", "c")
    d.check("COMMAND", "GETKEYS", "PFDEBUG", "GETREG", "a")


def test_random_commands(d):
    """5,000 random commands on five keys, seeded: replies and, after each
    write, the written key's bytes compared."""
    rng = random.Random(20240607)
    keys = [f"h{i}" for i in range(5)]
    pool = [f"el{i}".encode() for i in range(4000)] + [b"", b"\x00", b"\xff" * 9]
    for _ in range(5000):
        roll = rng.random()
        key = rng.choice(keys)
        if roll < 0.50:
            n = rng.choice((1, 1, 2, 3, 8, 40))
            els = [rng.choice(pool) if rng.random() < 0.7 else rng.randbytes(rng.randrange(0, 25))
                   for _ in range(n)]
            check(d, "PFADD", key, *els, keys=[key])
        elif roll < 0.70:
            check(d, "PFCOUNT", key, keys=[key])
        elif roll < 0.78:
            check(d, "PFCOUNT", *rng.sample(keys + ["nokey"], rng.randrange(2, 5)))
        elif roll < 0.88:
            srcs = rng.sample(keys + ["nokey"], rng.randrange(0, 4))
            check(d, "PFMERGE", key, *srcs, keys=[key])
        elif roll < 0.92:
            d.check("GET", key)
        elif roll < 0.95:
            check(d, "PFDEBUG", rng.choice(("ENCODING", "DECODE", "TODENSE")), key, keys=[key])
        elif roll < 0.96:
            d.check("PFDEBUG", "GETREG", key)
        elif roll < 0.975:
            d.check("DEL", key)
        elif roll < 0.985:
            d.check("CONFIG", "SET", "hll-sparse-max-bytes", rng.choice((0, 50, 300, 1000, 3000)))
        else:
            d.check("EXPIRE", key, 1000)
            d.check("TTL", key)
    for key in keys:
        d.check("GET", key)
        d.check("PFCOUNT", key)


EFFECT_SCRIPT = [
    ["PFADD", "h", "a", "b"], ["PFADD", "h", "a"], ["PFADD", "e"], ["PFCOUNT", "h"],
    ["PFCOUNT", "h"], ["PFCOUNT", "h", "e"], ["PFCOUNT", "missing"],
    ["PFADD", "h", "c"], ["PFCOUNT", "h"], ["PFMERGE", "m", "h", "e"], ["PFMERGE", "m"],
    ["PFDEBUG", "ENCODING", "h"], ["PFDEBUG", "DECODE", "h"], ["PFDEBUG", "TODENSE", "h"],
    ["PFDEBUG", "TODENSE", "h"], ["PFDEBUG", "GETREG", "m"], ["PFDEBUG", "GETREG", "m"],
    ["SET", "bad", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x40\x00"],
    ["PFADD", "bad", "x"], ["PFCOUNT", "bad"], ["PFMERGE", "m", "bad"],
    ["PFCOUNT", "m"],
    ["MULTI"], ["PFADD", "t", "x"], ["PFCOUNT", "t"], ["PFCOUNT", "t"], ["EXEC"],
    ["MULTI"], ["PFCOUNT", "t"], ["PFCOUNT", "m", "t"], ["EXEC"],
    ["EVAL", "return redis.call('PFCOUNT', KEYS[1])", "1", "h"],
    ["PFADD", "h", "zz"], ["EVAL", "return redis.call('PFCOUNT', KEYS[1])", "1", "h"],
]


def test_propagation_matches_redis_aof(tidelog, aof_oracle):
    """What PFADD, PFCOUNT, PFMERGE and PFDEBUG propagate is what Redis
    appends to its AOF: PFCOUNT only when it stored a fresh count."""
    assert_effects_match_aof(tidelog, aof_oracle, EFFECT_SCRIPT)


def _random_sparse(rng: random.Random) -> bytes:
    """Opcodes drawn at random: their runs often miss 16384 (fewer or more
    registers), some end in an XZERO cut short; a few add up exactly."""
    body = bytearray()
    total = 0
    target = rng.choice((16384, 16384, rng.randrange(1, 20000)))
    while total < target and len(body) < 400:
        kind = rng.random()
        if kind < 0.3:
            run = rng.randrange(1, 65)
            body.append(run - 1)
        elif kind < 0.45:
            run = rng.randrange(1, min(16384, max(2, target - total)) + 1)
            body += bytes([0x40 | ((run - 1) >> 8), (run - 1) & 0xFF])
        else:
            run = rng.randrange(1, 5)
            body.append(0x80 | (rng.randrange(0, 32) << 2) | (run - 1))
        total += run
    if rng.random() < 0.1:
        body.append(rng.randrange(0x40, 0x80))       # an XZERO cut short
    stale = rng.choice((b"\x80", b"\x00"))
    return HEADER_SPARSE[:15] + stale + bytes(body)


def test_random_odd_sparse_strings(d):
    """Sparse strings of random opcodes set into both servers, then PFADD,
    PFCOUNT, PFMERGE and PFDEBUG on them: the same replies and bytes."""
    rng = random.Random(77)
    commands = [["PFADD", "k"], ["PFCOUNT", "k"], ["PFCOUNT", "k", "o"], ["PFMERGE", "m", "k"],
                ["PFMERGE", "k", "o"], ["PFDEBUG", "TODENSE", "k"], ["PFDEBUG", "DECODE", "k"]]
    d.check("PFADD", "o", "x", "y", "z")
    for _ in range(300):
        value = _random_sparse(rng)
        d.check("SET", "k", value)
        d.check("DEL", "m")
        for _ in range(3):
            argv = list(rng.choice(commands))
            if argv[0] == "PFADD":
                argv += [f"r{rng.randrange(100000)}" for _ in range(rng.randrange(1, 6))]
            check(d, *argv, keys=["k", "m"])
