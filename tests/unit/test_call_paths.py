"""Every way a command runs answers alike.

A client's command takes one of three paths: ``execute``'s fast dispatch
(admission settled: ``call(..., CALL_FAST)``), the batch loop
``execute_many`` (that call written out), or the checked path (resolution,
``admit``, then ``call(..., CALL_NETWORK)``).  For every command of the table
(a sample argv each, on a keyspace with a key of every type) the three give
the same reply bytes, the same effects, the same ``dirty``, the same
statistics and the same keyspace afterwards; a run handler (XADD) gives what
its calls one by one give.
"""

from __future__ import annotations

import random

import pytest

from tests.support.engine_harness import NOW
from tidelog.clock import FakeClock
from tidelog.commands import table
from tidelog.commands.contract import NO_DISPATCH
from tidelog.commands.effects import argv_of
from tidelog.config import Config
from tidelog.engine import BLOCKED, NOT_RUN, POSTPONED, Engine
from tidelog.errors import CommandError
from tidelog.resp import encode

# The keyspace every sample runs on: a key of every type (and a consumer
# group with a pending entry).
SETUP = [
    "SET s v", "SET n 10", "HSET h f v f2 v2", "RPUSH l a b c", "SADD st a b c",
    "ZADD z 1 a 2 b 3 c", "XADD x 1-1 f v", "XADD x 2-1 f2 v2", "XGROUP CREATE x g 0",
    "XREADGROUP GROUP g c COUNT 1 STREAMS x >", "PFADD hll a b", "SETBIT bm 3 1",
    "GEOADD geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
    "HSET hx f v", "HPEXPIRE hx 100000 FIELDS 1 f",
]

# A sample argv per command (its table name); the commands not listed get
# a generic one (see sample()), which at least runs their arity and
# argument errors through every path.
SAMPLES = {
    "append": "APPEND s tail", "bitcount": "BITCOUNT bm", "bitop": "BITOP OR dst bm bm",
    "bitpos": "BITPOS bm 1", "blmove": "BLMOVE l l2 LEFT RIGHT 0", "blpop": "BLPOP l 0",
    "brpop": "BRPOP nolist 0", "bzpopmin": "BZPOPMIN z 0", "copy": "COPY s s2",
    "dbsize": "DBSIZE", "decr": "DECR n", "decrby": "DECRBY n 3", "del": "DEL s h",
    "echo": "ECHO hi", "exists": "EXISTS s h nokey", "expire": "EXPIRE s 100",
    "expiretime": "EXPIRETIME hx", "flushall": "FLUSHALL", "flushdb": "FLUSHDB",
    "geoadd": "GEOADD geo 2.35 48.85 Paris", "geodist": "GEODIST geo Palermo Catania",
    "geopos": "GEOPOS geo Palermo", "geosearch": "GEOSEARCH geo FROMLONLAT 15 37 BYRADIUS 200 km ASC",
    "get": "GET s", "getdel": "GETDEL s", "getex": "GETEX s EX 100", "getrange": "GETRANGE s 0 0",
    "getset": "GETSET s w", "hdel": "HDEL h f", "hexists": "HEXISTS h f", "hget": "HGET h f",
    "hgetall": "HGETALL h", "hincrby": "HINCRBY h n 2", "hkeys": "HKEYS h", "hlen": "HLEN h",
    "hmget": "HMGET h f nof", "hset": "HSET h f3 v3", "hsetnx": "HSETNX h f v9", "hstrlen": "HSTRLEN h f",
    "hvals": "HVALS h", "hpersist": "HPERSIST hx FIELDS 1 f", "httl": "HTTL hx FIELDS 1 f",
    "incr": "INCR n", "incrby": "INCRBY n 5", "incrbyfloat": "INCRBYFLOAT n 1.5", "keys": "KEYS *",
    "lindex": "LINDEX l 1", "linsert": "LINSERT l BEFORE b x", "llen": "LLEN l",
    "lmove": "LMOVE l l2 LEFT RIGHT",
    "lpop": "LPOP l", "lpos": "LPOS l b", "lpush": "LPUSH l z", "lrange": "LRANGE l 0 -1",
    "lrem": "LREM l 0 a", "lset": "LSET l 0 q", "ltrim": "LTRIM l 0 1", "mget": "MGET s n nokey",
    "mset": "MSET a 1 b 2", "msetnx": "MSETNX a 1 b 2", "persist": "PERSIST hx", "pexpire": "PEXPIRE s 5000",
    "pfadd": "PFADD hll c", "pfcount": "PFCOUNT hll", "pfmerge": "PFMERGE hll2 hll", "ping": "PING",
    "psetex": "PSETEX s 1000 v", "pttl": "PTTL s", "publish": "PUBLISH ch m", "rename": "RENAME s s3",
    "renamenx": "RENAMENX s n", "rpop": "RPOP l", "rpoplpush": "RPOPLPUSH l l2", "rpush": "RPUSH l d",
    "sadd": "SADD st d", "scard": "SCARD st", "sdiff": "SDIFF st nost", "sdiffstore": "SDIFFSTORE st2 st",
    "set": "SET s w", "setex": "SETEX s 100 w", "setnx": "SETNX s w", "setrange": "SETRANGE s 1 xyz",
    "sinter": "SINTER st st", "sismember": "SISMEMBER st a", "smembers": "SMEMBERS st",
    "smove": "SMOVE st st2 a", "sort": "SORT l ALPHA", "srem": "SREM st a", "strlen": "STRLEN s",
    "sunion": "SUNION st nost", "ttl": "TTL s", "type": "TYPE z", "unlink": "UNLINK s l",
    "xack": "XACK x g 1-1", "xadd": "XADD x 3-1 f v", "xautoclaim": "XAUTOCLAIM x g c2 0 0",
    "xclaim": "XCLAIM x g c2 0 1-1", "xdel": "XDEL x 1-1", "xlen": "XLEN x", "xpending": "XPENDING x g",
    "xrange": "XRANGE x - +", "xread": "XREAD COUNT 2 STREAMS x 0",
    "xreadgroup": "XREADGROUP GROUP g c STREAMS x >",
    "xrevrange": "XREVRANGE x + -", "xsetid": "XSETID x 5-5", "xtrim": "XTRIM x MAXLEN 1",
    "xgroup|create": "XGROUP CREATE x g2 $", "xgroup|destroy": "XGROUP DESTROY x g",
    "xgroup|setid": "XGROUP SETID x g 0", "xinfo|stream": "XINFO STREAM x", "xinfo|groups": "XINFO GROUPS x",
    "xinfo|consumers": "XINFO CONSUMERS x g", "zadd": "ZADD z 4 d", "zcard": "ZCARD z",
    "zcount": "ZCOUNT z 1 2", "zincrby": "ZINCRBY z 2 a", "zrange": "ZRANGE z 0 -1 WITHSCORES",
    "zrangebyscore": "ZRANGEBYSCORE z 1 2", "zrank": "ZRANK z b", "zrem": "ZREM z a",
    "zrevrange": "ZREVRANGE z 0 -1", "zscore": "ZSCORE z b", "zunionstore": "ZUNIONSTORE z2 1 z",
    "zpopmin": "ZPOPMIN z", "zmscore": "ZMSCORE z a nob", "multi": "MULTI", "exec": "EXEC",
    "discard": "DISCARD", "watch": "WATCH s", "unwatch": "UNWATCH", "select": "SELECT 1",
    "swapdb": "SWAPDB 0 1", "move": "MOVE s 1", "object|encoding": "OBJECT ENCODING z",
    "client|setname": "CLIENT SETNAME me", "client|getname": "CLIENT GETNAME", "client|id": "CLIENT ID",
    "config|get": "CONFIG GET maxmemory", "config|set": "CONFIG SET maxmemory-samples 7",
    "eval": "EVAL \"return redis.call('get', KEYS[1])\" 1 s", "eval_ro": "EVAL_RO \"return 1\" 0",
    "scan": "SCAN 0", "hscan": "HSCAN h 0", "sscan": "SSCAN st 0", "zscan": "ZSCAN z 0",
    "command|count": "COMMAND COUNT", "lcs": "LCS s s", "randomkey": "RANDOMKEY",
    "srandmember": "SRANDMEMBER st", "spop": "SPOP st", "hrandfield": "HRANDFIELD h",
    "zrandmember": "ZRANDMEMBER z",
}

# Commands left out, with why: they stop the process, sleep, talk to the
# network or write files.
SKIPPED = {
    "shutdown": "stops the server", "debug": "sleeps, crashes, reloads",
    "monitor": "needs a connection", "migrate": "connects to another server",
    "replicaof": "connects to a primary", "slaveof": "connects to a primary",
    "sync": "a replica's handshake", "psync": "a replica's handshake", "failover": "needs replicas",
}

# Replies that differ between two engines by nature (the wall clock, the
# run id, memory measures): only their kind is compared.
VOLATILE = {"time", "info", "lastsave", "memory|usage", "memory|stats", "memory|doctor",
            "memory|malloc-stats", "client|list", "client|info", "hello", "lolwut",
            "object|idletime", "object|freq", "command|docs", "latency|doctor",
            "acl|genpass"}

FILLER = [b"s", b"1", b"f", b"v", b"0", b"x", b"2", b"y"]


def all_specs() -> list[table.CommandSpec]:
    specs = []
    for spec in table.COMMANDS.values():
        if spec.handler is not None:
            specs.append(spec)
        for sub in (spec.subcommands or {}).values():
            specs.append(sub)
    return sorted(specs, key=lambda s: s.name)


def sample(spec: table.CommandSpec) -> list[bytes]:
    """The spec's sample argv, or a generic one of its arity."""
    text = SAMPLES.get(spec.name)
    if text is not None:
        return split(text)
    argv = [part.upper().encode() for part in spec.name.split("|")]
    need = abs(spec.arity)
    i = 0
    while len(argv) < need:
        argv.append(FILLER[i % len(FILLER)])
        i += 1
    return argv


def split(text: str) -> list[bytes]:
    parts, quoted = [], text.split('"')
    for i, piece in enumerate(quoted):
        parts.extend([piece] if i % 2 else piece.split())
    return [p.encode() for p in parts]


def new_engine() -> tuple[Engine, object, list]:
    engine = Engine(Config(), clock=FakeClock(NOW))
    client = engine.new_client()
    client.send = lambda reply: None
    for line in SETUP:
        engine.execute(client, split(line))
    effects: list = []
    engine.effect_listeners.append(effects.append)
    engine.dirty = 0
    engine.reset_stats()
    return engine, client, effects


def warm(engine: Engine, argv: list[bytes]) -> None:
    """Resolve the command once, so that the fast dispatch holds it when it
    may (its statistics are reset after)."""
    try:
        engine._resolve(argv)
    except CommandError:
        pass
    engine.reset_stats()


def outcome(engine: Engine, client, effects: list, reply, volatile: bool) -> dict:
    if reply is BLOCKED or reply is POSTPONED:
        shown = repr(reply)
    elif volatile:
        shown = type(reply).__name__
    else:
        shown = encode(reply, client.protocol)
    keys = {index: sorted(db.data) for index, db in enumerate(engine.dbs) if db.data}
    return {
        "reply": shown,
        "effects": [[(db, argv_of(e)) for db, e in batch] for batch in effects],
        "dirty": engine.dirty,
        "stats": [(name, calls, rejected, failed)
                  for name, calls, _, rejected, failed in engine.command_stats()],
        "errors": dict(engine.error_counts),
        "keys": keys,
        "types": {(i, k): engine.dbs[i].data[k].__class__.__name__
                  for i, ks in keys.items() for k in ks},
        "internal_errors": engine.internal_errors,
    }


def run_fast(argv: list[bytes], volatile: bool) -> tuple[dict, bool]:
    engine, client, effects = new_engine()
    warm(engine, argv)
    fast = client.dispatch.get(argv[0]) is not None
    random.seed(7)
    reply = engine.execute(client, argv)
    return outcome(engine, client, effects, reply, volatile), fast


def run_batch(argv: list[bytes], volatile: bool) -> tuple[dict, bool]:
    engine, client, effects = new_engine()
    warm(engine, argv)
    random.seed(7)
    replies: list = []
    j, reply = engine.execute_many(client, [argv], 0, replies)
    batched = j == 1
    if reply is NOT_RUN:
        reply = replies[0] if batched else engine.execute(client, argv)
    return outcome(engine, client, effects, reply, volatile), batched


def run_checked(argv: list[bytes], volatile: bool) -> dict:
    engine, client, effects = new_engine()
    client.dispatch = NO_DISPATCH  # as a client that is not settled: admit, then call
    warm(engine, argv)
    random.seed(7)
    reply = engine.execute(client, argv)
    return outcome(engine, client, effects, reply, volatile)


SPECS = [spec for spec in all_specs() if spec.name.partition("|")[0] not in SKIPPED]


@pytest.mark.parametrize("spec", SPECS, ids=[spec.name for spec in SPECS])
def test_the_fast_batch_and_checked_paths_answer_alike(spec):
    argv = sample(spec)
    volatile = spec.name in VOLATILE
    checked = run_checked(argv, volatile)
    fast, _ = run_fast(argv, volatile)
    batch, _ = run_batch(argv, volatile)
    assert fast == checked, argv
    assert batch == checked, argv
    assert checked["internal_errors"] == 0


def test_most_samples_take_the_fast_paths():
    """The comparison means something: most samples do run on the fast
    dispatch and in the batch loop (the others, subcommands and the
    like, are resolved on the checked path whatever the client)."""
    fast = batched = 0
    for spec in SPECS:
        argv = sample(spec)
        fast += run_fast(argv, True)[1]
        batched += run_batch(argv, True)[1]
    assert fast >= 150 and batched >= 140, (fast, batched)


def test_every_command_of_the_table_is_compared_or_skipped_for_a_reason():
    names = {spec.name for spec in all_specs()}
    assert {spec.name for spec in SPECS} | {n for n in names if n.partition("|")[0] in SKIPPED} == names
    assert set(SAMPLES) <= names, set(SAMPLES) - names
    assert VOLATILE <= names, VOLATILE - names


def test_the_comparison_sees_a_difference():
    """A path that did something else would be caught: the same command on
    a keyspace one key short compares unequal (reply, effects, keys)."""
    argv = split("DEL s h")
    engine, client, effects = new_engine()
    engine.execute(client, split("DEL h"))
    effects.clear()
    engine.dirty = 0
    engine.reset_stats()
    short = outcome(engine, client, effects, engine.execute(client, argv), False)
    assert short != run_checked(argv, False)


def test_a_run_answers_as_its_calls_one_by_one():
    runs = [split("XADD x * a 1"), split("XADD x * b 2"), split("XADD x * c 3 d 4")]
    engine, client, effects = new_engine()
    warm(engine, runs[0])
    assert len({engine.run_key(argv) for argv in runs} - {None}) == 1  # one run, as a session gathers it
    run_replies = engine.execute_run(client, runs)
    one_engine, one_client, one_effects = new_engine()
    one_client.dispatch = NO_DISPATCH
    warm(one_engine, runs[0])
    one_replies = [one_engine.execute(one_client, argv) for argv in runs]
    assert [encode(r, 2) for r in run_replies] == [encode(r, 2) for r in one_replies]
    assert outcome(engine, client, effects, None, True) == \
        outcome(one_engine, one_client, one_effects, None, True)
