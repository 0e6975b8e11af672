"""The generic commands over real sockets: connection (PING, HELLO, AUTH,
SELECT, CLIENT *, QUIT, RESET), keyspace (DEL, EXISTS, KEYS, SCAN, RENAME, the
EXPIRE family, OBJECT), server (COMMAND, CONFIG, INFO, DEBUG, SHUTDOWN, ...)
and strings (GET, SET, MGET, INCR).

Byte-exact agreement with Redis is checked in
``tests/differential/test_generic_diff.py``; here we check what only a live
server shows: expiry over time, other connections being killed or
unblocked, effects handed to the AOF/replication listeners, SCAN's
guarantee while the keyspace changes, transactions, shutdown.
"""

from __future__ import annotations

import random
import re
import threading
import time

import pytest
import redis

from tests.support.rawclient import RawClient, encode_command
from tidelog.commands.effects import argv_of
from tidelog.commands.table import COMMANDS
from tidelog.config import Config
from tidelog.server.embed import EmbeddedServer


def wait_until(predicate, timeout: float = 5.0, interval: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True


@pytest.fixture(autouse=True)
def restore_settings(tidelog):
    """Undo what these tests change on the shared server."""
    yield
    def restore() -> None:
        engine = tidelog.engine
        engine.active_expire = True
        for name, value in (("hz", "10"), ("timeout", "0"), ("loglevel", "notice"),
                            ("maxclients", "10000")):
            engine.config.set(name, value)
    tidelog.call(restore)


@pytest.fixture
def effects(tidelog):
    """Every effect (db, argv) the engine hands to its listeners during the test."""
    seen: list[tuple[int, list[bytes]]] = []

    def listener(batch):
        seen.extend((db, list(argv_of(effect))) for db, effect in batch)

    tidelog.call(lambda: tidelog.engine.effect_listeners.append(listener))
    yield seen
    tidelog.call(lambda: tidelog.engine.effect_listeners.remove(listener))


@pytest.fixture
def stream_key(r):
    try:
        r.execute_command("XADD", "s", "1-1", "f", "v")
    except redis.ResponseError as exc:
        pytest.skip(f"XADD is not available: {exc}")
    return "s"


def other_client(tidelog) -> RawClient:
    return RawClient(tidelog.port)


# =====================================================================================
# Connection
# =====================================================================================
def test_ping_echo(r, r3, raw):
    assert r.ping() is True
    assert raw.call("PING", "hi") == b"$2\r\nhi\r\n"
    assert r.echo("hi") == b"hi"
    assert r3.execute_command("ECHO", "x\r\ny") == b"x\r\ny"
    assert raw.call("PING") == b"+PONG\r\n"
    assert raw.call("PING", "a", "b") == b"-ERR wrong number of arguments for 'ping' command\r\n"


def test_hello_switches_protocol_and_reports_the_client(raw, tidelog):
    client_id = int(raw.call("CLIENT", "ID")[1:-2])
    reply = raw.call("HELLO", "3", "SETNAME", "hello-conn")
    assert reply.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n8.10.0\r\n")
    assert b"$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:%d\r\n" % client_id in reply
    assert reply.endswith(b"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
                          b"$7\r\nmodules\r\n*0\r\n")
    assert raw.call("GET", "nope") == b"_\r\n"  # RESP3 null
    assert raw.call("CLIENT", "GETNAME") == b"$10\r\nhello-conn\r\n"
    assert raw.call("HELLO", "2", "AUTH", "default", "whatever").startswith(b"*14\r\n")
    assert raw.call("GET", "nope") == b"$-1\r\n"
    assert raw.call("HELLO", "4") == b"-NOPROTO unsupported protocol version\r\n"
    assert raw.call("HELLO", "3", "AUTH", "bob", "pw") == (
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
    assert raw.call("GET", "nope") == b"$-1\r\n"  # a failed HELLO changes nothing


def test_hello_from_redis_py(r3):
    info = r3.execute_command("HELLO", "3")
    assert info[b"proto"] == 3 and info[b"server"] == b"redis" and info[b"role"] == b"master"


def test_auth(r, raw):
    assert r.execute_command("AUTH", "default", "anything") is True
    with pytest.raises(redis.AuthenticationError):
        r.execute_command("AUTH", "bob", "pw")
    assert raw.call("AUTH", "pw") == (
        b"-ERR AUTH <password> called without any password configured for the default user. "
        b"Are you sure your configuration is correct?\r\n")


def test_select_isolates_databases(r, raw):
    r.set("k", "zero")
    assert raw.call("SELECT", "1") == b"+OK\r\n"
    assert raw.call("GET", "k") == b"$-1\r\n"
    assert raw.call("SET", "k", "one") == b"+OK\r\n"
    assert raw.call("DBSIZE") == b":1\r\n"
    assert r.get("k") == b"zero"
    assert raw.call("SELECT", "16") == b"-ERR DB index is out of range\r\n"
    assert raw.call("GET", "k") == b"$3\r\none\r\n"  # still in db 1
    keyspace = r.info("keyspace")
    assert keyspace["db0"]["keys"] == 1 and keyspace["db1"]["keys"] == 1
    raw.call("FLUSHDB")
    assert r.get("k") == b"zero"


def test_client_id_name_info(r, raw):
    client_id = int(raw.call("CLIENT", "ID")[1:-2])
    assert raw.call("CLIENT", "GETNAME") == b"$-1\r\n"
    assert raw.call("CLIENT", "SETNAME", "worker-7") == b"+OK\r\n"
    assert raw.call("CLIENT", "SETNAME", "bad name") == (
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n")
    assert raw.call("CLIENT", "GETNAME") == b"$8\r\nworker-7\r\n"
    info = raw.call("CLIENT", "INFO").split(b"\r\n")[1]
    assert info.startswith(b"id=%d addr=127.0.0.1:" % client_id)
    assert b" name=worker-7 " in info and b" cmd=client|info " in info
    assert b" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 " in info
    assert info.endswith(b" user=default redir=-1 resp=2 lib-name= lib-ver=\n")
    fields = [f.split(b"=")[0] for f in info.split()]
    assert fields == [
        b"id", b"addr", b"laddr", b"fd", b"name", b"age", b"idle", b"flags", b"db", b"sub",
        b"psub", b"ssub", b"multi", b"qbuf", b"qbuf-free", b"argv-mem", b"multi-mem", b"rbs",
        b"rbp", b"obl", b"oll", b"omem", b"tot-mem", b"events", b"cmd", b"user", b"redir",
        b"resp", b"lib-name", b"lib-ver"]
    assert r.client_id() != client_id


def test_client_list_shows_names_and_lib_names(r, raw):
    r.client_setname("py-client")  # redis-py also sent CLIENT SETINFO LIB-NAME/LIB-VER
    assert raw.call("CLIENT", "SETINFO", "LIB-NAME", "rawlib") == b"+OK\r\n"
    assert raw.call("CLIENT", "SETINFO", "lib-ver", "1.2.3") == b"+OK\r\n"
    assert raw.call("CLIENT", "SETINFO", "LIB-VER", "1 2") == (
        b"-ERR LIB-VER cannot contain spaces, newlines or special characters.\r\n")
    assert raw.call("CLIENT", "SETINFO", "color", "x") == b"-ERR Unrecognized option 'color'\r\n"
    raw.call("CLIENT", "SETNAME", "raw-client")
    raw.call("SELECT", "3")
    listing = r.execute_command("CLIENT", "LIST").decode()
    lines = {re.search(r" name=(\S*)", line).group(1): line for line in listing.splitlines()}
    assert "lib-name=redis-py" in lines["py-client"] and "cmd=client|list" in lines["py-client"]
    assert lines["raw-client"].endswith(" lib-name=rawlib lib-ver=1.2.3")
    assert " db=3 " in lines["raw-client"] and " cmd=select " in lines["raw-client"]
    raw_id = re.search(r"id=(\d+)", lines["raw-client"]).group(1)
    only = r.execute_command("CLIENT", "LIST", "ID", raw_id, "999999").decode()
    assert only.count("\n") == 1 and "name=raw-client" in only
    assert r.execute_command("CLIENT", "LIST", "TYPE", "pubsub") == b""
    assert r.execute_command("CLIENT", "LIST", "TYPE", "normal").decode().count("\n") >= 2


def test_client_list_flags_in_multi(raw, r):
    raw.call("MULTI")
    raw.call("PING")
    line = [ln for ln in r.execute_command("CLIENT", "LIST").decode().splitlines()
            if "cmd=ping" in ln or "cmd=multi" in ln][0]
    assert " flags=x " in line and " multi=1 " in line
    raw.call("DISCARD")


def test_client_kill_by_id_addr_and_self(r, tidelog):
    victim = other_client(tidelog)
    victim_id = int(victim.call("CLIENT", "ID")[1:-2])
    assert r.execute_command("CLIENT", "KILL", "ID", victim_id) == 1
    assert victim.read_until_closed() == b""
    assert wait_until(lambda: tidelog.call(lambda: victim_id not in tidelog.engine.clients))
    assert r.execute_command("CLIENT", "KILL", "ID", victim_id) == 0

    victim = other_client(tidelog)
    addr = re.search(rb"addr=(\S+)", victim.call("CLIENT", "INFO")).group(1)
    assert r.execute_command("CLIENT", "KILL", addr) == b"OK"  # the old form
    assert victim.read_until_closed() == b""
    with pytest.raises(redis.ResponseError, match="No such client"):
        r.execute_command("CLIENT", "KILL", "1.2.3.4:5")

    me = other_client(tidelog)
    my_id = int(me.call("CLIENT", "ID")[1:-2])
    assert me.call("CLIENT", "KILL", "ID", my_id) == b":0\r\n"  # SKIPME yes by default
    assert me.call("CLIENT", "KILL", "ID", my_id, "SKIPME", "no") == b":1\r\n"
    assert me.read_until_closed() == b""
    assert r.ping()


def test_client_unblock(r, tidelog, stream_key):
    blocked = other_client(tidelog)
    blocked_id = int(blocked.call("CLIENT", "ID")[1:-2])

    def is_blocked() -> bool:
        return tidelog.call(lambda: tidelog.engine.clients[blocked_id].blocked is not None)

    blocked.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]))
    assert wait_until(is_blocked)
    assert " flags=b " in r.execute_command("CLIENT", "LIST", "ID", blocked_id).decode()
    assert r.execute_command("CLIENT", "UNBLOCK", blocked_id) == 1
    assert blocked.read_reply(timeout=5) == b"*-1\r\n"

    blocked.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]))
    assert wait_until(is_blocked)
    assert r.execute_command("CLIENT", "UNBLOCK", blocked_id, "ERROR") == 1
    assert blocked.read_reply(timeout=5) == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert blocked.call("PING") == b"+PONG\r\n"
    assert r.execute_command("CLIENT", "UNBLOCK", blocked_id) == 0  # not blocked any more
    blocked.close()


def test_client_no_touch_and_object_idletime(r, raw, tidelog):
    r.set("k", "v")

    def age_key() -> None:
        db = tidelog.engine.dbs[0]
        db.access[b"k"] = tidelog.engine.clock.now_ms() - 30_000

    tidelog.call(age_key)
    assert r.object("idletime", "k") >= 30  # OBJECT itself does not touch
    assert raw.call("CLIENT", "NO-TOUCH", "ON") == b"+OK\r\n"
    assert raw.call("GET", "k") == b"$1\r\nv\r\n"
    assert r.object("idletime", "k") >= 30
    assert " flags=T " in r.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
    assert raw.call("CLIENT", "NO-TOUCH", "OFF") == b"+OK\r\n"
    raw.call("GET", "k")
    assert r.object("idletime", "k") <= 1
    assert raw.call("CLIENT", "NO-EVICT", "ON") == b"+OK\r\n"
    assert raw.call("CLIENT", "NO-EVICT", "maybe") == b"-ERR syntax error\r\n"


def test_quit_closes_after_ok(raw):
    raw.send_raw(encode_command(["QUIT"]) + encode_command(["PING"]))
    assert raw.read_until_closed() == b"+OK\r\n"


def test_reset(raw, r, tidelog):
    client_id = int(raw.call("CLIENT", "ID")[1:-2])
    raw.call("HELLO", "3", "SETNAME", "to-reset")
    raw.call("SELECT", "2")
    raw.call("WATCH", "w")
    raw.call("MULTI")
    assert raw.call("SET", "x", "1") == b"+QUEUED\r\n"
    raw.call("CLIENT", "NO-TOUCH", "ON")
    assert raw.call("RESET") == b"+RESET\r\n"
    state = tidelog.call(lambda: tidelog.engine.clients[client_id])
    assert (state.protocol, state.db, state.name, state.multi, state.watched, state.no_touch) == (
        2, 0, b"", None, set(), False)
    assert raw.call("CLIENT", "GETNAME") == b"$-1\r\n"
    assert raw.call("SET", "x", "1") == b"+OK\r\n"
    assert r.get("x") == b"1"


# =====================================================================================
# Keyspace
# =====================================================================================
def test_del_unlink_exists_type_dbsize(r, stream_key):
    r.set("a", "1")
    r.set("b", "2")
    assert r.exists("a", "b", "nope", "a") == 3
    assert r.type("a") == b"string" and r.type("s") == b"stream" and r.type("x") == b"none"
    assert r.dbsize() == 3
    assert r.delete("a", "nope") == 1
    assert r.unlink("b", "s") == 2
    assert r.dbsize() == 0


def test_wrongtype_against_a_stream(r, raw, stream_key):
    wrongtype = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert raw.call("GET", "s") == wrongtype
    assert raw.call("INCR", "s") == wrongtype
    assert raw.call("SET", "s", "x", "GET") == wrongtype
    assert raw.call("MGET", "s") == b"*1\r\n$-1\r\n"
    assert raw.call("OBJECT", "ENCODING", "s") == b"$6\r\nstream\r\n"
    usage = r.memory_usage("s")
    assert isinstance(usage, int) and usage > 0


def test_keys_patterns(r):
    for key in ["hello", "hallo", "hxllo", "hllo", "heeeello", "h[llo", "other"]:
        r.set(key, "1")
    assert sorted(r.keys("h?llo")) == [b"h[llo", b"hallo", b"hello", b"hxllo"]
    assert sorted(r.keys("h*llo")) == [b"h[llo", b"hallo", b"heeeello", b"hello", b"hllo", b"hxllo"]
    assert sorted(r.keys("h[ae]llo")) == [b"hallo", b"hello"]
    assert sorted(r.keys("h[^e]llo")) == [b"h[llo", b"hallo", b"hxllo"]
    assert sorted(r.keys("h[a-b]llo")) == [b"hallo"]
    assert r.keys("h\\[llo") == [b"h[llo"]
    assert len(r.keys("*")) == 7


def test_keys_skips_expired_keys(r):
    r.set("gone", "1", px=1)
    r.set("here", "1")
    time.sleep(0.01)
    assert r.keys("*") == [b"here"]


def _full_scan(r, count: int = 10, on_step=None, **options) -> tuple[list[bytes], int]:
    seen: list[bytes] = []
    cursor, calls = 0, 0
    while True:
        cursor, keys = r.scan(cursor, count=count, **options)
        seen += keys
        calls += 1
        if on_step is not None:
            on_step(calls)
        if cursor == 0:
            return seen, calls


def test_scan_returns_every_key_once_when_nothing_changes(r):
    pipe = r.pipeline(transaction=False)
    for i in range(2000):
        pipe.set(f"key:{i}", i)
    pipe.execute()
    seen, calls = _full_scan(r, count=50)
    assert sorted(seen) == sorted(f"key:{i}".encode() for i in range(2000))
    assert calls > 10  # it really was incremental
    assert sorted(_full_scan(r, match="key:1??")[0]) == sorted(
        f"key:{i}".encode() for i in range(100, 200))


def test_scan_completeness_while_keys_are_deleted(r):
    """Keys present for the whole scan come back at least once even while
    most other keys are deleted (the table shrinks under the cursor)."""
    rng = random.Random(7)
    keys = [f"k{i}" for i in range(3000)]
    pipe = r.pipeline(transaction=False)
    for key in keys:
        pipe.set(key, "x")
    pipe.execute()
    stable = set(keys[::5])
    doomed = [k for k in keys if k not in stable]
    rng.shuffle(doomed)

    def delete_some(_calls: int) -> None:
        batch = [doomed.pop() for _ in range(min(60, len(doomed)))]
        if batch:
            r.delete(*batch)

    seen, _ = _full_scan(r, count=10, on_step=delete_some)
    seen_set = {k.decode() for k in seen}
    assert stable <= seen_set, f"missed {len(stable - seen_set)} stable keys"
    assert seen_set <= set(keys)


def test_scan_completeness_while_keys_are_added(r):
    """... and while the keyspace grows (the table splits under the cursor)."""
    stable = {f"s{i}" for i in range(500)}
    pipe = r.pipeline(transaction=False)
    for key in stable:
        pipe.set(key, "x")
    pipe.execute()
    counter = iter(range(10**6))

    def add_some(calls: int) -> None:
        if calls > 40:  # the table has doubled several times by now; let the scan end
            return
        pipe = r.pipeline(transaction=False)
        for _ in range(100):
            pipe.set(f"new{next(counter)}", "x")
        pipe.execute()

    seen, _ = _full_scan(r, count=10, on_step=add_some)
    missing = stable - {k.decode() for k in seen}
    assert not missing, f"missed {len(missing)} stable keys"


def test_scan_type_filter_and_errors(r, stream_key):
    r.set("str", "1")
    assert _full_scan(r, _type="stream")[0] == [b"s"]
    assert _full_scan(r, _type="STRING")[0] == [b"str"]
    with pytest.raises(redis.ResponseError, match="invalid cursor"):
        r.execute_command("SCAN", "abc")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("SCAN", "0", "COUNT", "0")


def test_rename_moves_value_and_ttl(r):
    r.set("a", "1", ex=100)
    assert r.rename("a", "b") is True
    assert r.get("a") is None and r.get("b") == b"1" and 99 <= r.ttl("b") <= 100
    r.set("c", "2")
    assert r.renamenx("b", "c") is False
    assert r.renamenx("b", "d") is True
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.rename("nope", "x")


# -- expiry ---------------------------------------------------------------------------
def test_ttl_family(r):
    r.set("k", "v")
    assert r.ttl("k") == -1 and r.pttl("k") == -1 and r.expiretime("k") == -1
    assert r.ttl("nope") == -2 and r.pexpiretime("nope") == -2
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100 and 99_000 < r.pttl("k") <= 100_000
    assert abs(r.expiretime("k") - (time.time() + 100)) < 3
    assert r.expire("k", 50, gt=True) is False and r.expire("k", 500, gt=True) is True
    assert r.expire("k", 600, lt=True) is False and r.expire("k", 60, lt=True) is True
    assert r.expire("k", 10, nx=True) is False and r.expire("k", 70, xx=True) is True
    assert r.pexpireat("k", 4_000_000_000_123) is True
    assert r.pexpiretime("k") == 4_000_000_000_123 and r.expiretime("k") == 4_000_000_000
    assert r.persist("k") is True and r.persist("k") is False and r.ttl("k") == -1


def test_lazy_expiry(r, raw, tidelog):
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    r.set("k", "v")
    assert r.pexpire("k", 50) is True
    time.sleep(0.15)
    assert r.dbsize() == 1  # nobody touched it and the cron is off
    assert r.get("k") is None  # the lookup expires it
    assert r.dbsize() == 0
    r.set("k2", "v", px=20)
    time.sleep(0.1)
    assert r.exists("k2") == 0 and r.ttl("k2") == -2


def test_active_expiry(r, tidelog):
    before = r.info("stats")["expired_keys"]
    for i in range(20):
        r.set(f"k{i}", "v", px=50)
    r.set("keeper", "v")
    assert r.dbsize() == 21
    assert wait_until(lambda: r.dbsize() == 1, timeout=5)  # DBSIZE touches nothing
    assert r.info("stats")["expired_keys"] - before == 20
    assert r.get("keeper") == b"v"


def test_expire_in_the_past_deletes(r):
    r.set("k", "v")
    assert r.expire("k", -1) is True
    assert r.exists("k") == 0
    r.set("k", "v")
    assert r.pexpireat("k", 1) is True
    assert r.exists("k") == 0


# -- effects --------------------------------------------------------------------------
def test_effects_of_expiry_commands(r, effects):
    r.set("k", "v")
    effects.clear()
    now = int(time.time() * 1000)
    r.expire("k", 100)
    r.expire("k", 100, nx=True)        # refused: nothing to propagate
    r.execute_command("PEXPIRE", "k", "5000", "GT")
    assert [argv[:2] for _, argv in effects] == [[b"PEXPIREAT", b"k"]]
    when = int(effects[0][1][2])
    assert now + 99_000 <= when <= now + 102_000
    effects.clear()
    r.execute_command("PEXPIRE", "k", "500000", "GT")
    assert effects[0][1][0] == b"PEXPIREAT" and effects[0][1][3:] == [b"GT"]
    effects.clear()
    r.pexpireat("k", 4_000_000_000_000)
    assert effects == [(0, [b"PEXPIREAT", b"k", b"4000000000000"])]
    effects.clear()
    r.expire("k", -10)
    assert effects == [(0, [b"DEL", b"k"])]
    effects.clear()
    r.expire("nope", 10)
    r.delete("nope")
    r.persist("nope")
    assert effects == []


def test_effects_of_set(r, effects):
    now = int(time.time() * 1000)
    r.set("k", "v", ex=10)
    r.set("k", "w", nx=True)  # refused
    r.execute_command("SET", "k", "v2", "PX", "2000", "GET")
    r.execute_command("SET", "k", "v3", "PXAT", "4000000000000", "GET")
    r.execute_command("SET", "k", "v4", "KEEPTTL")
    r.set("plain", "1")
    argvs = [argv for _, argv in effects]
    assert argvs[0][:4] == [b"SET", b"k", b"v", b"PXAT"]
    assert now + 9_000 <= int(argvs[0][4]) <= now + 12_000
    assert argvs[1][:4] == [b"SET", b"k", b"v2", b"PXAT"] and len(argvs[1]) == 5
    assert argvs[2:] == [[b"SET", b"k", b"v3", b"PXAT", b"4000000000000", b"GET"],
                         [b"SET", b"k", b"v4", b"KEEPTTL"], [b"SET", b"plain", b"1"]]


def test_effects_of_expiry_and_flush(r, raw, effects):
    raw.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("k", "v", px=10)
    time.sleep(0.05)
    effects.clear()
    assert r.get("k") is None
    assert effects == [(0, [b"DEL", b"k"])]
    effects.clear()
    raw.call("SELECT", "4")
    raw.call("SET", "x", "1")
    raw.call("INCR", "x")
    raw.call("FLUSHDB")
    raw.call("FLUSHALL", "ASYNC")  # nothing left, still propagated (as Redis)
    assert effects == [(4, [b"SET", b"x", b"1"]), (4, [b"INCR", b"x"]), (4, [b"FLUSHDB"]),
                       (4, [b"FLUSHALL", b"ASYNC"])]


def test_effects_of_a_transaction(raw, effects):
    raw.call("MULTI")
    raw.call("SET", "a", "1")
    raw.call("EXPIRE", "a", "100")
    raw.call("RENAME", "a", "b")
    raw.call("GET", "b")
    assert raw.call("EXEC").startswith(b"*4\r\n")
    argvs = [argv for _, argv in effects]
    assert argvs[0] == [b"MULTI"] and argvs[-1] == [b"EXEC"]
    assert argvs[1] == [b"SET", b"a", b"1"] and argvs[2][:2] == [b"PEXPIREAT", b"a"]
    assert argvs[3] == [b"RENAME", b"a", b"b"] and len(argvs) == 5


# =====================================================================================
# Transactions
# =====================================================================================
def test_watch_fails_when_a_key_is_touched(raw, r):
    r.set("k", "1")
    for touch in (lambda: r.set("k", "2"), lambda: r.expire("k", 100),
                  lambda: r.persist("k"), lambda: r.rename("k", "k2"),
                  lambda: r.flushdb()):
        if not r.exists("k"):
            r.set("k", "1")
        assert raw.call("WATCH", "k") == b"+OK\r\n"
        touch()
        raw.call("MULTI")
        assert raw.call("GET", "k") == b"+QUEUED\r\n"
        assert raw.call("EXEC") == b"*-1\r\n"
    assert raw.call("WATCH", "k") == b"+OK\r\n"
    r.expire("nope", 10)  # a failed write to another key changes nothing
    raw.call("MULTI")
    raw.call("PING")
    assert raw.call("EXEC") == b"*1\r\n+PONG\r\n"


def test_execabort_after_a_queued_error(raw, r):
    raw.call("MULTI")
    assert raw.call("SET", "a") == b"-ERR wrong number of arguments for 'set' command\r\n"
    assert raw.call("SET", "a", "1") == b"+QUEUED\r\n"
    assert raw.call("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    assert r.exists("a") == 0
    raw.call("MULTI")
    assert raw.call("SHUTDOWN") == b"-ERR Command not allowed inside a transaction\r\n"
    assert raw.call("EXEC").startswith(b"-EXECABORT")


def test_redis_py_transaction(r):
    with r.pipeline() as pipe:
        pipe.watch("counter")
        pipe.multi()
        pipe.incr("counter")
        pipe.expire("counter", 100)
        assert pipe.execute() == [1, True]
    with r.pipeline() as pipe:
        pipe.watch("counter")
        r.incr("counter")
        pipe.multi()
        pipe.incr("counter")
        with pytest.raises(redis.WatchError):
            pipe.execute()


# =====================================================================================
# Objects and strings
# =====================================================================================
def test_object_and_memory(r):
    r.set("i", "123")
    r.set("e", "hello")
    r.set("big", "x" * 100)
    assert r.object("encoding", "i") == b"int" and r.object("refcount", "i") == 2147483647
    assert r.object("encoding", "e") == b"embstr" and r.object("refcount", "e") == 1
    assert r.object("encoding", "big") == b"raw"
    assert r.object("encoding", "nope") is None
    with pytest.raises(redis.ResponseError, match="LFU maxmemory policy"):
        r.object("freq", "e")
    assert r.memory_usage("e") == 64 and r.memory_usage("i") == 48
    assert r.memory_usage("nope") is None
    debug = r.execute_command("DEBUG", "OBJECT", "e")
    assert re.fullmatch(rb"Value at:0x[0-9a-f]+ refcount:1 encoding:embstr serializedlength:6 "
                        rb"lru:\d+ lru_seconds_idle:\d+", debug if isinstance(debug, bytes)
                        else str(debug).encode()), debug


def test_get_set_mget_incr(r, r3):
    assert r.set("k", "v") is True and r.get("k") == b"v"
    assert r.set("k", "w", nx=True) is None
    assert r.set("k", "w", get=True) == b"v"
    assert r.set("k", "x", xx=True, px=100_000) is True and 99 <= r.ttl("k") <= 100
    assert r.set("k", "y", keepttl=True) is True and r.ttl("k") > 0
    assert r.set("k", "z") is True and r.ttl("k") == -1
    assert r.mget("k", "nope") == [b"z", None]
    assert r3.mget("k", "nope") == [b"z", None]
    assert r.incr("n") == 1 and r.incrby("n", 10) == 11 and r.decr("n") == 10
    assert r.decrby("n", 20) == -10
    r.set("n", str(2**63 - 1))
    with pytest.raises(redis.ResponseError, match="would overflow"):
        r.incr("n")


# =====================================================================================
# Server
# =====================================================================================
def test_command_introspection(r, tidelog):
    r.response_callbacks.pop("COMMAND", None)  # the raw replies, not redis-py's digest
    assert r.execute_command("COMMAND", "COUNT") == len(COMMANDS)
    info = r.execute_command("COMMAND", "INFO", "get", "nope")
    assert info[1] is None
    name, arity, flags, first, last, step, categories, tips, specs, subs = info[0]
    assert (name, arity, first, last, step) == (b"get", 2, 1, 1, 1)
    assert flags == [b"readonly", b"fast"] and categories == [b"@read", b"@string", b"@fast"]
    everything = r.execute_command("COMMAND")
    assert len(everything) == len(COMMANDS)
    names = r.execute_command("COMMAND", "LIST")
    assert b"client|list" in names and b"xadd" in names and b"config|get" in names
    def as_dict(flat: list) -> dict:  # a RESP2 map is a flat list
        return dict(zip(flat[::2], flat[1::2]))

    docs = as_dict(r.execute_command("COMMAND", "DOCS", "dbsize", "config"))
    assert as_dict(docs[b"dbsize"])[b"summary"] == (
        b"Return the number of keys in the selected database")
    assert b"config|set" in as_dict(as_dict(docs[b"config"])[b"subcommands"])
    assert r.execute_command("COMMAND", "GETKEYS", "RENAME", "a", "b") == [b"a", b"b"]
    assert r.execute_command("COMMAND", "GETKEYS", "XREAD", "STREAMS", "x", "y", "0", "0") == [
        b"x", b"y"]


def test_every_command_has_a_syntax_docstring_and_complexity():
    for spec in COMMANDS.values():
        for s in [spec, *spec.subcommands.values()]:
            assert s.complexity, f"{s.name} does not state its cost"
            assert s.summary, s.name


def test_config_get_set_resetstat(r):
    assert r.config_get("stream-node-*") == {"stream-node-max-entries": "100",
                                             "stream-node-max-bytes": "4096"}
    assert r.config_set("hz", 20) is True and r.config_get("hz") == {"hz": "20"}
    with pytest.raises(redis.ResponseError, match="argument 'timeout'"):
        r.execute_command("CONFIG", "SET", "hz", "30", "timeout", "x")
    assert r.config_get("hz") == {"hz": "20"}  # all or nothing
    r.execute_command("CONFIG", "SET", "hz", "30", "timeout", "7")
    assert r.config_get("hz") == {"hz": "30"} and r.config_get("timeout") == {"timeout": "7"}
    r.config_set("timeout", 0)
    r.set("x", 1)
    assert r.info("stats")["total_commands_processed"] > 2
    assert r.config_resetstat() is True
    assert r.info("stats")["total_commands_processed"] <= 2
    assert "cmdstat_set" not in r.info("commandstats")
    with pytest.raises(redis.ResponseError, match="running without a config file"):
        r.execute_command("CONFIG", "REWRITE")


def test_config_rewrite(tmp_path):
    path = tmp_path / "tidelog.conf"
    path.write_text("# my settings\nhz 15\n\n# timeouts\ntimeout 30\ntimeout 40\n")
    config = Config()
    config.load_text(path.read_text())
    config.config_file = str(path)
    with EmbeddedServer(config=config, port=0) as srv:
        client = redis.Redis(port=srv.port)
        client.config_set("hz", 25)
        client.config_set("stream-node-max-entries", 7)
        assert client.execute_command("CONFIG", "REWRITE") == b"OK"
        client.close()
    text = path.read_text()
    assert text.startswith("# my settings\nhz 25\n\n# timeouts\ntimeout 40\n")
    assert "# Generated by CONFIG REWRITE\n" in text and "stream-node-max-entries 7\n" in text
    assert "port" in text  # differs from the default (6379)
    reloaded = Config()
    reloaded.load_text(text)
    assert reloaded["hz"] == 25 and reloaded["timeout"] == 40
    assert reloaded["stream-node-max-entries"] == 7


def test_info(r, raw, tidelog):
    info = r.info()
    assert info["redis_version"] == "8.10.0" and info["role"] == "master"
    assert info["aof_enabled"] == 0 and info["loading"] == 0
    assert info["master_replid"] == tidelog.call(lambda: tidelog.engine.replication.replid)
    assert info["connected_clients"] >= 1
    before = r.info("persistence")["rdb_changes_since_last_save"]
    r.set("k", "v", ex=1000)
    r.set("k2", "v")
    assert r.info("persistence")["rdb_changes_since_last_save"] == before + 2
    keyspace = r.info("keyspace")["db0"]
    assert keyspace["keys"] == 2 and keyspace["expires"] == 1
    assert 990_000 < keyspace["avg_ttl"] <= 1_000_000
    assert r.info("commandstats")["cmdstat_set"]["calls"] >= 2
    text = raw.call("INFO", "everything").decode()
    assert [line for line in text.split("\r\n") if line.startswith("#")] == [
        "# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication",
        "# CPU", "# Modules", "# Commandstats", "# Errorstats", "# Latencystats", "# Cluster",
        "# Keyspace"]
    raw.call("HELLO", "3")
    reply = raw.call("INFO", "server")
    assert re.match(rb"=\d+\r\ntxt:# Server\r\nredis_version:8\.10\.0\r\n", reply)
    assert raw.call("INFO", "nope") == b"=4\r\ntxt:\r\n"


def test_time(r):
    seconds, micros = r.time()
    assert abs(seconds + micros / 1e6 - time.time()) < 2


def test_flushdb_and_flushall(r, raw):
    r.set("a", 1)
    raw.call("SELECT", "1")
    raw.call("SET", "b", "1")
    assert raw.call("FLUSHDB", "ASYNC") == b"+OK\r\n"
    assert raw.call("DBSIZE") == b":0\r\n" and r.dbsize() == 1
    raw.call("SET", "b", "1")
    assert r.flushall() is True
    assert raw.call("DBSIZE") == b":0\r\n" and r.dbsize() == 0


def test_debug(r, raw, tidelog):
    start = time.monotonic()
    assert raw.call("DEBUG", "SLEEP", "0.2") == b"+OK\r\n"
    assert time.monotonic() - start >= 0.19
    old = r.info("replication")["master_replid"]
    assert raw.call("DEBUG", "CHANGE-REPL-ID") == b"+OK\r\n"
    assert r.info("replication")["master_replid"] != old
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    assert tidelog.call(lambda: tidelog.engine.active_expire) is False
    assert raw.call("DEBUG", "HELP").startswith(b"*")
    assert raw.call("DEBUG", "NOPE") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try DEBUG HELP.\r\n")


def test_shutdown_stops_the_server():
    srv = EmbeddedServer(port=0).start()
    try:
        client = RawClient(srv.port)
        assert client.call("SHUTDOWN", "ABORT") == b"-ERR No shutdown in progress.\r\n"
        client.send_raw(encode_command(["SHUTDOWN", "NOSAVE"]))
        assert client.read_until_closed() == b""
        srv._thread.join(10)
        assert not srv._thread.is_alive()
        with pytest.raises(OSError):
            RawClient(srv.port, timeout=1).call("PING")
    finally:
        srv.stop()
    assert srv.engine.internal_errors == 0


def test_maxclients_from_config_set(r, tidelog):
    r.config_set("maxclients", 1000)
    assert tidelog.call(lambda: tidelog.engine.config["maxclients"]) == 1000


def test_loglevel_applies_at_once(r):
    import logging
    r.config_set("loglevel", "warning")
    assert logging.getLogger("tidelog").level == logging.WARNING
    r.config_set("loglevel", "notice")
    assert logging.getLogger("tidelog").level == logging.INFO


def test_many_clients_in_threads(tidelog):
    """Several clients at once, each in its own database: no cross-talk."""
    errors: list[BaseException] = []

    def work(db: int) -> None:
        try:
            client = redis.Redis(port=tidelog.port, db=db)
            for i in range(50):
                client.set(f"k{i}", db)
            assert client.dbsize() == 50
            assert {int(v) for v in client.mget([f"k{i}" for i in range(50)])} == {db}
            client.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(db,)) for db in range(1, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors


def test_no_internal_errors_so_far(tidelog):
    assert tidelog.call(lambda: tidelog.engine.internal_errors) == 0
