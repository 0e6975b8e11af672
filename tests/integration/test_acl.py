"""ACL and AUTH over real sockets, from redis-py (sync and asyncio, RESP2 and
RESP3) and raw bytes: logging in as users, what an unauthenticated client
may do, -NOPERM for commands, keys and channels (and that a refused command
changes nothing), stream traffic of a restricted consumer, ACL changes that
reach connected clients at once, scripts, the ACL file and ``user`` lines in
the configuration file, the ACL LOG and INFO's counters, SORT's BY/GET, and
passwords kept out of MONITOR and SLOWLOG.

The texts are Redis 8's.  The differential tests
(``tests/differential/test_acl_diff.py``) compare the replies of six users
with redis-server 7.0.15; this module covers what they cannot: several
connections, disconnections, blocking, pipelines, files and start-up.

Every server here is fresh (users are server-wide state).  A disconnection
is observed by reading until the server closes the socket, with a bounded
wait; blocked clients are waited for on the engine's own count.
"""

from __future__ import annotations

import asyncio
import hashlib
import re

import pytest
import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.exceptions import NoPermissionError
from redis.retry import Retry

from tests.support.rawclient import RawClient, encode_command
from tests.support.redis_oracle import free_port
from tests.support.redispy import raw_replies, streams
from tests.support.waits import async_wait_blocked, wait_blocked

pytestmark = pytest.mark.timeout(120)

TIMEOUT = 10.0
PW = "pw-1"
OK = b"+OK\r\n"
WRONGPASS = "invalid username-password pair or user is disabled."
NOPERM_KEY = "No permissions to access a key"
NOPERM_CHANNEL = "No permissions to access a channel"
NOAUTH = b"-NOAUTH Authentication required.\r\n"


def noperm_cmd(user: str, command: str) -> str:
    """Redis 8's -NOPERM text for a command (without the code)."""
    return f"User {user} has no permissions to run the '{command}' command"


# -- connections ---------------------------------------------------------------------

@pytest.fixture
def srv(embedded):
    """A fresh server: users are server-wide, so every test starts anew."""
    return embedded(save="")


def connect(srv, username: str | None = None, password: str | None = None,
            protocol: int = 2, **kwargs) -> redis.Redis:
    """redis-py as ``username`` (AUTH, or HELLO 3 AUTH for RESP3).  No retries,
    so a connection the server closes shows as ConnectionError; no CLIENT
    SETINFO, which a restricted user may not run (it would be logged)."""
    return redis.Redis(port=srv.port, username=username, password=password, protocol=protocol,
                       socket_timeout=TIMEOUT, retry=Retry(NoBackoff(), 0), driver_info=None,
                       decode_responses=True, **kwargs)


def aconnect(srv, username: str | None = None, password: str | None = None,
             protocol: int = 2) -> redis.asyncio.Redis:
    return redis.asyncio.Redis(port=srv.port, username=username, password=password,
                               protocol=protocol, socket_timeout=TIMEOUT,
                               retry=redis.asyncio.retry.Retry(NoBackoff(), 0), driver_info=None,
                               decode_responses=True)


def raw_as(srv, user: str | None = None, password: str = PW, protocol: int = 2) -> RawClient:
    """A raw connection, logged in as ``user`` (HELLO 3 AUTH for RESP3)."""
    client = RawClient(srv.port, timeout=TIMEOUT)
    if protocol == 3:
        argv = ["HELLO", "3"] + (["AUTH", user, password] if user else [])
        assert client.call(*argv).startswith(b"%")
    elif user:
        assert client.call("AUTH", user, password) == OK
    return client


@pytest.fixture
def admin(srv):
    client = connect(srv)
    yield client
    client.close()


def setuser(admin: redis.Redis, name: str, *rules: str) -> None:
    assert admin.execute_command("ACL", "SETUSER", name, *rules) == "OK"


def assert_closed(raw: RawClient) -> None:
    """The server closes this connection (within TIMEOUT), sending nothing more."""
    assert raw.read_until_closed(TIMEOUT) == b""


def assert_gone(client: redis.Redis) -> None:
    """redis-py's connection was closed by the server: its next command fails."""
    with pytest.raises(redis.ConnectionError):
        client.ping()


def info_stats(admin: redis.Redis) -> dict[str, int]:
    stats = admin.info("stats")
    return {k: stats[k] for k in ("acl_access_denied_auth", "acl_access_denied_cmd",
                                  "acl_access_denied_key", "acl_access_denied_channel")}


def acl_log(admin: redis.Redis, *args) -> list[dict]:
    """ACL LOG's entries as dicts (RESP2 pairs or RESP3 maps)."""
    entries = admin.execute_command("ACL", "LOG", *args)
    return [e if isinstance(e, dict) else dict(zip(e[::2], e[1::2])) for e in entries]


def client_users(admin: redis.Redis) -> list[str]:
    return sorted(c["user"] for c in admin.client_list())


# -- AUTH, HELLO AUTH, users -----------------------------------------------------------

@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_logs_in_as_users(srv, admin, protocol):
    """redis-py's username/password: AUTH over RESP2, HELLO 3 AUTH over RESP3."""
    setuser(admin, "alice", "on", f">{PW}", "~a:*", "+@all")
    setuser(admin, "hashed", "on", "#" + hashlib.sha256(b"from-a-hash").hexdigest(), "~*",
            "+@all")
    setuser(admin, "anyone", "on", "nopass", "~*", "+@all")
    setuser(admin, "offline", "off", f">{PW}", "~*", "+@all")
    with connect(srv, "alice", PW, protocol) as alice:
        assert alice.execute_command("ACL", "WHOAMI") == "alice"
        assert alice.client_info()["user"] == "alice"
        assert alice.set("a:1", "v") is True
    with connect(srv, "hashed", "from-a-hash", protocol) as hashed:
        assert hashed.execute_command("ACL", "WHOAMI") == "hashed"
    with connect(srv, "anyone", "whatever it is", protocol) as anyone:
        assert anyone.execute_command("ACL", "WHOAMI") == "anyone"
    for user, password in (("alice", "wrong"), ("nosuch", PW), ("offline", PW),
                           ("hashed", hashlib.sha256(b"from-a-hash").hexdigest())):
        with connect(srv, user, password, protocol) as refused:
            with pytest.raises(redis.AuthenticationError, match=re.escape(WRONGPASS)):
                refused.ping()
    assert info_stats(admin)["acl_access_denied_auth"] == 4


@pytest.mark.parametrize("protocol", [2, 3])
async def test_asyncio_clients_log_in_as_users(srv, admin, protocol):
    setuser(admin, "alice", "on", f">{PW}", "~a:*", "-@all", "+get", "+set", "+acl|whoami")
    alice = aconnect(srv, "alice", PW, protocol)
    wrong = aconnect(srv, "alice", "wrong", protocol)
    try:
        assert await alice.execute_command("ACL", "WHOAMI") == "alice"
        replies = await asyncio.gather(*(alice.set(f"a:{i}", i) for i in range(50)))
        assert replies == [True] * 50
        with pytest.raises(NoPermissionError, match=NOPERM_KEY):
            await alice.get("b:1")
        with pytest.raises(redis.AuthenticationError, match=re.escape(WRONGPASS)):
            await wrong.ping()
    finally:
        await alice.aclose()
        await wrong.aclose()
    assert len(admin.keys("a:*")) == 50


def test_auth_and_hello_auth_on_the_wire(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~*", "+@all")
    raw = raw_as(srv)
    # AUTH <password> with a default user that has none: Redis's advice.
    assert raw.call("AUTH", "x") == (
        b"-ERR AUTH <password> called without any password configured for the default "
        b"user. Are you sure your configuration is correct?\r\n")
    assert raw.call("AUTH", "alice", "bad") == b"-WRONGPASS " + WRONGPASS.encode() + b"\r\n"
    assert raw.call("ACL", "WHOAMI") == b"$7\r\ndefault\r\n"  # a failure changes nothing
    # HELLO 3 AUTH with a wrong password: refused, and the protocol stays RESP2.
    assert raw.call("HELLO", "3", "AUTH", "alice", "bad").startswith(b"-WRONGPASS")
    assert raw.call("CONFIG", "GET", "port").startswith(b"*2\r\n")
    hello = raw.call("HELLO", "3", "AUTH", "alice", PW)
    assert hello.startswith(b"%7\r\n") and b"proto\r\n:3\r\n" in hello
    assert raw.call("ACL", "WHOAMI") == b"$5\r\nalice\r\n"
    assert raw.call("CONFIG", "GET", "port").startswith(b"%1\r\n")
    assert raw.call("AUTH", "alice", PW) == OK
    raw.close()


def test_requirepass_set_and_unset_at_run_time(srv, admin):
    """requirepass is the default user's password: connected clients stay
    logged in, new ones must AUTH (only AUTH, HELLO AUTH, RESET and QUIT
    run before); unset, even a client that never logged in may run
    anything."""
    before = raw_as(srv)
    assert admin.config_set("requirepass", "s3cret") is True
    assert admin.config_get("requirepass") == {"requirepass": "s3cret"}
    assert admin.ping() is True and before.call("PING") == b"+PONG\r\n"
    assert admin.acl_getuser("default")["passwords"] == [
        hashlib.sha256(b"s3cret").hexdigest()]
    fresh = raw_as(srv)
    for argv in (["PING"], ["GET", "k"], ["ACL", "WHOAMI"], ["CLIENT", "SETNAME", "x"],
                 ["XADD", "s", "*", "f", "v"]):
        assert fresh.call(*argv) == NOAUTH, argv
    assert fresh.call("HELLO", "3").startswith(b"-NOAUTH HELLO must be called with the client "
                                               b"already authenticated")
    assert fresh.call("RESET") == b"+RESET\r\n"
    assert fresh.call("AUTH", "nope").startswith(b"-WRONGPASS")
    with connect(srv) as nopass:
        with pytest.raises(redis.AuthenticationError, match="Authentication required"):
            nopass.get("k")
    with connect(srv, password="s3cret") as client:
        assert client.ping() is True
    with connect(srv, "default", "s3cret", protocol=3) as client:
        assert client.ping() is True
    assert admin.exists("s") == 0  # the refused XADD wrote nothing
    leaving = raw_as(srv)
    assert leaving.call("QUIT") == OK
    assert_closed(leaving)
    assert admin.config_set("requirepass", "") is True
    assert fresh.call("PING") == b"+PONG\r\n"  # never logged in, and now needs not
    assert fresh.call("ACL", "WHOAMI") == b"$7\r\ndefault\r\n"
    with connect(srv) as client:
        assert client.ping() is True
    assert info_stats(admin)["acl_access_denied_auth"] == 1
    fresh.close()
    before.close()


def test_reset_goes_back_to_the_default_user(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~*", "+@all")
    raw = raw_as(srv, "alice")
    assert raw.call("RESET") == b"+RESET\r\n"
    assert raw.call("ACL", "WHOAMI") == b"$7\r\ndefault\r\n"
    admin.config_set("requirepass", "s3cret")
    assert raw.call("AUTH", "alice", PW) == OK
    assert raw.call("RESET") == b"+RESET\r\n"
    assert raw.call("PING") == NOAUTH  # the default user now needs its password
    assert raw.call("AUTH", "s3cret") == OK
    assert raw.call("PING") == b"+PONG\r\n"
    raw.close()


def test_client_list_info_and_kill_user(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~*", "+@all")
    setuser(admin, "bob", "on", f">{PW}", "~*", "+@all")
    alice1, alice2, bob = raw_as(srv, "alice"), raw_as(srv, "alice", protocol=3), raw_as(srv, "bob")
    assert client_users(admin) == ["alice", "alice", "bob", "default"]
    assert b" user=alice " in alice2.call("CLIENT", "INFO")
    assert admin.client_info()["user"] == "default"
    assert admin.client_kill_filter(user="alice") == 2
    assert_closed(alice1)
    assert_closed(alice2)
    assert bob.call("PING") == b"+PONG\r\n"
    assert client_users(admin) == ["bob", "default"]
    with pytest.raises(redis.ResponseError, match=r"^No such user 'nosuch'$"):
        admin.client_kill_filter(user="nosuch")
    assert admin.client_kill_filter(user="alice") == 0
    bob.close()


# -- -NOPERM: commands, keys, channels -----------------------------------------------------

@pytest.mark.parametrize("protocol", [2, 3])
def test_denied_commands_change_nothing(srv, admin, protocol):
    admin.set("k", "1")
    admin.xadd("s", {"f": "v"}, id="1-1")
    setuser(admin, "reader", "on", f">{PW}", "~*", "&*", "-@all", "+@read", "+config|get")
    with connect(srv, "reader", PW, protocol) as reader:
        assert reader.get("k") == "1"
        assert reader.xlen("s") == 1
        assert reader.config_get("maxclients") == {"maxclients": "10000"}
        for call, name in ((lambda: reader.set("k", "2"), "set"),
                           (lambda: reader.delete("k"), "del"),
                           (lambda: reader.xadd("s", {"f": "w"}), "xadd"),
                           (lambda: reader.xtrim("s", maxlen=0), "xtrim"),
                           (lambda: reader.flushall(), "flushall"),
                           (lambda: reader.config_set("maxclients", "5"), "config|set"),
                           (lambda: reader.publish("news", "m"), "publish")):
            with pytest.raises(NoPermissionError, match=re.escape(noperm_cmd("reader", name))):
                call()
    assert admin.get("k") == "1" and admin.xlen("s") == 1
    assert admin.config_get("maxclients") == {"maxclients": "10000"}
    assert info_stats(admin)["acl_access_denied_cmd"] == 7


def test_a_restricted_default_user_restricts_every_connection(srv, admin):
    """Connections start as the default user: restricted, each is checked
    (those connected already included), with no AUTH needed."""
    setuser(admin, "root", "on", f">{PW}", "~*", "&*", "+@all")
    with connect(srv, "root", PW) as root:
        setuser(root, "default", "resetkeys", "~public:*", "-@all", "+get", "+ping")
        with connect(srv) as anonymous:
            assert anonymous.ping() is True
            assert anonymous.get("public:1") is None
            with pytest.raises(NoPermissionError, match=f"^{NOPERM_KEY}$"):
                anonymous.get("private")
            with pytest.raises(NoPermissionError, match=re.escape(noperm_cmd("default", "set"))):
                anonymous.set("public:1", "x")
        with pytest.raises(NoPermissionError, match=re.escape(noperm_cmd("default", "set"))):
            admin.set("public:1", "x")  # connected before, as the default user too
        setuser(root, "default", "allkeys", "+@all")
        assert admin.set("public:1", "x") is True
        assert root.get("public:1") == "x"


@pytest.mark.parametrize("protocol", [2, 3])
def test_key_patterns_for_reading_writing_and_selectors(srv, admin, protocol):
    """%R~ reads, %W~ writes, ~ both; a selector allows what it allows on
    its own (the root one and a selector never add up within a command)."""
    for key in ("r:1", "w:1", "rw:1", "b:1", "other"):
        admin.set(key, "orig")
    setuser(admin, "split", "on", f">{PW}", "%R~r:*", "%W~w:*", "~rw:*", "-@all",
            "+@string", "+@keyspace", "(~b:* +get)")
    with connect(srv, "split", PW, protocol) as split:
        assert split.get("r:1") == "orig" and split.get("rw:1") == "orig"
        assert split.set("w:2", "new") is True and split.set("rw:1", "new") is True
        assert split.copy("r:1", "w:3") is True
        assert split.get("b:1") == "orig"            # the selector's key and command
        assert split.exists("r:1", "w:1") == 2       # EXISTS only looks: any permission
        for call in (lambda: split.set("r:1", "x"),          # read-only key
                     lambda: split.get("w:1"),               # write-only key
                     lambda: split.set("w:1", "x", get=True),  # SET ... GET reads it too
                     lambda: split.getdel("w:1"),
                     lambda: split.copy("w:1", "rw:9"),
                     lambda: split.rename("r:1", "rw:2"),
                     lambda: split.mset({"w:4": "x", "r:4": "x"}),
                     lambda: split.get("other"),
                     # The root selector has these commands but not the key,
                     # the other one the key but not the command: the key is
                     # what Redis reports (the highest reason).
                     lambda: split.delete("b:1"),
                     lambda: split.set("b:1", "x")):
            with pytest.raises(NoPermissionError, match=f"^{NOPERM_KEY}$"):
                call()
    assert {k: admin.get(k) for k in ("r:1", "w:1", "rw:1", "b:1", "other", "w:4", "r:4",
                                      "rw:2", "rw:9")} == {
        "r:1": "orig", "w:1": "orig", "rw:1": "new", "b:1": "orig", "other": "orig",
        "w:4": None, "r:4": None, "rw:2": None, "rw:9": None}


def test_channel_permissions(srv, admin):
    setuser(admin, "pub", "on", f">{PW}", "resetchannels", "&news.*", "&alerts", "-@all",
            "+@pubsub")
    listener = admin.pubsub()
    listener.psubscribe("*")
    assert listener.get_message(timeout=TIMEOUT)["type"] == "psubscribe"
    with connect(srv, "pub", PW) as pub:
        assert pub.publish("news.sport", "m") == 1
        with pytest.raises(NoPermissionError, match=re.escape(NOPERM_CHANNEL)):
            pub.publish("sport", "leak")
        with pytest.raises(NoPermissionError, match=re.escape(NOPERM_CHANNEL)):
            pub.execute_command("SPUBLISH", "sport", "leak")
        assert pub.publish("alerts", "m") == 1
    # In order: a refused message would have come between the two.
    got = [listener.get_message(timeout=TIMEOUT)["channel"] for _ in range(2)]
    assert got == ["news.sport", "alerts"]
    listener.close()
    for protocol in (2, 3):
        raw = raw_as(srv, "pub", protocol=protocol)
        # SUBSCRIBE of several channels: refused whole when one is not allowed.
        assert raw.call("SUBSCRIBE", "alerts", "sport") == b"-NOPERM " + \
            NOPERM_CHANNEL.encode() + b"\r\n"
        assert raw.call("PSUBSCRIBE", "news.a*").startswith(b"-NOPERM")  # not literally one
        assert raw.call("SSUBSCRIBE", "sport").startswith(b"-NOPERM")
        assert raw.call("PSUBSCRIBE", "news.*").endswith(b"$6\r\nnews.*\r\n:1\r\n")
        raw.close()
    assert admin.pubsub_numsub("alerts", "sport") == [("alerts", 0), ("sport", 0)]
    assert info_stats(admin)["acl_access_denied_channel"] == 8


# -- stream traffic of a restricted consumer ---------------------------------------------

def groups_of(admin: redis.Redis, key: str) -> dict[str, dict]:
    """XINFO GROUPS by name, with each group's consumers by name."""
    found = {}
    for group in admin.xinfo_groups(key):
        group = dict(group)
        group["consumers"] = {c["name"]: c["pending"] for c in admin.xinfo_consumers(key, group["name"])}
        found[group["name"]] = group
    return found


@pytest.fixture
def streams_setup(admin):
    """s:1 (the consumer's own), ro:1 (it may only read), x:1 (not its own),
    each with one entry and a group ``g``; s:1 and x:1 also have a group
    literally named STREAMS."""
    for key in ("s:1", "ro:1", "x:1"):
        admin.xadd(key, {"f": "v"}, id="1-1")
        admin.xgroup_create(key, "g", id="0")
    for key in ("s:1", "x:1"):
        admin.xgroup_create(key, "STREAMS", id="0")
    setuser(admin, "consumer", "on", f">{PW}", "~s:*", "%R~ro:*", "-@all", "+@stream", "+ping")
    return admin


@pytest.mark.parametrize("protocol", [2, 3])
def test_stream_commands_of_a_restricted_consumer(srv, streams_setup, protocol):
    """XREADGROUP's keys are the ones after STREAMS, found by skipping the
    options and their arguments (a group or consumer named STREAMS, COUNT,
    BLOCK, NOACK before STREAMS: redis/redis#15478), both ways: a command
    on an allowed key is not refused for the consumer's name, one on a
    forbidden key is not let through by it.  The other stream commands'
    keys are where their key specs say.  XREADGROUP only needs read
    access, as Redis's key spec (RO, access) and its acl-v2 tests
    (``%R~read*``, XREADGROUP ... STREAMS read2) say."""
    admin = streams_setup
    before = groups_of(admin, "x:1"), groups_of(admin, "ro:1")
    c = raw_replies(connect(srv, "consumer", PW, protocol))
    try:
        x = c.execute_command
        assert x("XADD", "s:1", "2-1", "f", "w") == "2-1"
        # A group and a consumer named STREAMS, options before STREAMS.
        got = x("XREADGROUP", "GROUP", "STREAMS", "STREAMS", "COUNT", "1", "STREAMS", "s:1", ">")
        assert [k for k, _ in streams(got)] == ["s:1"]
        got = x("XREADGROUP", "COUNT", "5", "BLOCK", "100", "NOACK", "GROUP", "g", "STREAMS",
                "STREAMS", "s:1", ">")
        assert [(k, [e[0] for e in entries]) for k, entries in streams(got)] == \
            [("s:1", ["1-1", "2-1"])]
        got = x("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "ro:1", ">")  # read access is enough
        assert [k for k, _ in streams(got)] == ["ro:1"]
        assert x("XREAD", "COUNT", "1", "STREAMS", "ro:1", "0")
        # A key literally named STREAMS allowed too: taking a consumer named
        # STREAMS for the keyword would now check that key and let x:1 through.
        setuser(admin, "consumer", "~STREAMS")
        refused = [
            ["XADD", "x:1", "*", "f", "v"],
            ["XADD", "ro:1", "*", "f", "v"],                       # write needed
            # The same spellings of XREADGROUP on a key it may not touch:
            # the key checked is x:1, never the consumer or a group.
            ["XREADGROUP", "GROUP", "STREAMS", "STREAMS", "COUNT", "1", "STREAMS", "x:1", ">"],
            ["XREADGROUP", "COUNT", "1", "BLOCK", "100", "NOACK", "GROUP", "g", "STREAMS",
             "STREAMS", "x:1", ">"],
            ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s:1", "x:1", ">", ">"],
            ["XREAD", "BLOCK", "100", "STREAMS", "x:1", "$"],
            ["XACK", "ro:1", "g", "1-1"],
            ["XACK", "x:1", "g", "1-1"],
            ["XCLAIM", "x:1", "g", "c2", "0", "1-1"],
            ["XCLAIM", "ro:1", "g", "c2", "0", "1-1"],
            ["XAUTOCLAIM", "x:1", "g", "c2", "0", "0"],
            ["XAUTOCLAIM", "ro:1", "g", "c2", "0", "0"],
            ["XGROUP", "CREATE", "x:1", "g2", "0"],
            ["XGROUP", "CREATE", "ro:1", "g2", "0"],
            ["XGROUP", "CREATECONSUMER", "x:1", "g", "c9"],
            ["XGROUP", "SETID", "x:1", "g", "$"],
            ["XGROUP", "DESTROY", "x:1", "STREAMS"],
            ["XTRIM", "x:1", "MAXLEN", "0"],
            ["XDEL", "x:1", "1-1"],
            ["XINFO", "STREAM", "x:1"],
        ]
        for argv in refused:
            with pytest.raises(NoPermissionError, match=f"^{NOPERM_KEY}$"):
                x(*argv)
        # What it may do on its own stream.
        assert x("XACK", "s:1", "STREAMS", "1-1") == 1
        assert x("XCLAIM", "s:1", "g", "c2", "0", "1-1", "JUSTID") == []  # NOACK: nothing pending
        assert x("XGROUP", "CREATE", "s:1", "g2", "0") == "OK"
        assert x("XAUTOCLAIM", "s:1", "g2", "c2", "0", "0")[0] == "0-0"
        assert x("XGROUP", "CREATECONSUMER", "s:1", "g2", "c3") == 1
    finally:
        c.close()
    # Nothing refused changed anything.
    assert (groups_of(admin, "x:1"), groups_of(admin, "ro:1")) == (before[0], {
        **before[1], "g": {**before[1]["g"], "consumers": {"c1": 1}, "pending": 1,
                           "last-delivered-id": "1-1", "entries-read": 1, "lag": 0}})
    assert admin.xlen("x:1") == 1 and admin.xlen("ro:1") == 1 and admin.xlen("s:1") == 2
    assert sorted(g["name"] for g in admin.xinfo_groups("s:1")) == ["STREAMS", "g", "g2"]
    assert info_stats(admin)["acl_access_denied_key"] == len(refused)
    # The log names the key each refusal was about.
    assert {e["object"] for e in acl_log(admin, "100")} == {"x:1", "ro:1"}


@pytest.mark.parametrize("protocol", [2, 3])
def test_allowed_blocking_reads_are_served(srv, admin, protocol):
    """XREAD BLOCK and XREADGROUP BLOCK of a restricted user wait, and are
    served by another client's XADD."""
    setuser(admin, "consumer", "on", f">{PW}", "~s:*", "-@all", "+@stream")
    admin.xgroup_create("s:g", "g", id="$", mkstream=True)
    reader = raw_as(srv, "consumer", protocol=protocol)
    reader.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s:b", "$"]))
    wait_blocked(srv, 1)
    admin.xadd("s:b", {"f": "v"}, id="5-1")
    assert b"5-1" in reader.read_reply(TIMEOUT)
    reader.send_raw(encode_command(["XREADGROUP", "GROUP", "g", "STREAMS", "BLOCK", "0",
                                    "STREAMS", "s:g", ">"]))
    wait_blocked(srv, 1)
    admin.xadd("s:g", {"f": "v"}, id="6-1")
    assert b"6-1" in reader.read_reply(TIMEOUT)
    assert admin.xpending("s:g", "g")["consumers"] == [{"name": "STREAMS", "pending": 1}]
    reader.close()


async def test_asyncio_blocked_reader_of_a_restricted_user(srv, admin):
    setuser(admin, "consumer", "on", f">{PW}", "~s:*", "-@all", "+@stream")
    reader = aconnect(srv, "consumer", PW, protocol=3)
    writer = aconnect(srv)
    try:
        task = asyncio.create_task(reader.xread({"s:a": "$"}, block=0))
        await async_wait_blocked(srv, 1)
        await writer.xadd("s:a", {"f": "v"}, id="7-1")
        got = await asyncio.wait_for(task, TIMEOUT)
        assert got == {"s:a": [[("7-1", {"f": "v"})]]}  # redis-py's RESP3 shape
        with pytest.raises(NoPermissionError, match=NOPERM_KEY):
            await reader.xread({"x:a": "$"}, block=0)
    finally:
        await reader.aclose()
        await writer.aclose()


def test_pipelined_xadd_bursts_are_checked_call_by_call(srv, admin):
    """A pipelined burst of ``XADD key * f v`` runs as one call on the fast
    path; a restricted client's must still be checked call by call."""
    setuser(admin, "producer", "on", f">{PW}", "~s:*", "-@all", "+xadd", "+ping")
    with admin.pipeline(transaction=False) as pipe:   # the fast path is warm
        for _ in range(50):
            pipe.xadd("s:warm", {"f": "v"})
        pipe.execute()
    assert srv.call(lambda: b"XADD" in srv.engine.runnable or b"xadd" in srv.engine.runnable)
    with connect(srv, "producer", PW) as producer:
        pipe = producer.pipeline(transaction=False)
        burst = (["s:ok"] * 100 + ["x:no"] * 100 + ["s:ok", "x:no"] * 100)
        for key in burst:
            pipe.xadd(key, {"f": "v"})
        replies = pipe.execute(raise_on_error=False)
    refused = [key for key, reply in zip(burst, replies) if isinstance(reply, NoPermissionError)]
    added = [reply for key, reply in zip(burst, replies) if key == "s:ok"]
    assert refused == ["x:no"] * 200
    assert all(isinstance(reply, str) and "-" in reply for reply in added)
    assert admin.xlen("s:ok") == 200 and admin.exists("x:no") == 0
    assert info_stats(admin)["acl_access_denied_key"] == 200
    # Not logged in at all: every call of the burst is refused.
    admin.config_set("requirepass", "s3cret")
    stranger = RawClient(srv.port, timeout=TIMEOUT)
    replies = stranger.pipeline([["XADD", "s:ok", "*", "f", "v"]] * 100)
    assert replies == [NOAUTH] * 100
    assert admin.xlen("s:ok") == 200
    stranger.close()


# -- ACL changes reach connected clients at once ------------------------------------------

@pytest.mark.parametrize("protocol", [2, 3])
def test_setuser_narrowing_a_connected_user(srv, admin, protocol):
    """A user with every permission, narrowed while connected: its next
    command is checked, and widened again it runs unchecked."""
    setuser(admin, "alice", "on", f">{PW}", "~*", "&*", "+@all")
    with connect(srv, "alice", PW, protocol) as alice:
        assert alice.set("k", "1") is True
        setuser(admin, "alice", "-set", "resetkeys", "~k*")
        with pytest.raises(NoPermissionError, match=re.escape(noperm_cmd("alice", "set"))):
            alice.set("k", "2")
        with pytest.raises(NoPermissionError, match=NOPERM_KEY):
            alice.get("other")
        assert alice.get("k") == "1"
        setuser(admin, "alice", "+set", "allkeys")
        assert alice.set("other", "3") is True
    assert admin.mget("k", "other") == ["1", "3"]


async def test_asyncio_client_narrowed_while_connected(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~*", "&*", "+@all")
    alice = aconnect(srv, "alice", PW, protocol=3)
    try:
        assert await alice.xadd("s", {"f": "v"}, id="1-1") == "1-1"
        setuser(admin, "alice", "-@write")
        with pytest.raises(NoPermissionError, match=re.escape(noperm_cmd("alice", "xadd"))):
            await alice.xadd("s", {"f": "v"}, id="2-1")
        assert await alice.xlen("s") == 1
    finally:
        await alice.aclose()


def test_deluser_closes_the_users_connections(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~*", "+@all")
    setuser(admin, "bob", "on", f">{PW}", "~*", "+@all")
    idle, resp3 = raw_as(srv, "alice"), raw_as(srv, "alice", protocol=3)
    alice_py, bob = connect(srv, "alice", PW), connect(srv, "bob", PW)
    assert alice_py.ping() is True and bob.ping() is True
    assert admin.acl_deluser("alice", "nosuch") == 1
    assert_closed(idle)
    assert_closed(resp3)
    assert_gone(alice_py)
    assert bob.ping() is True
    assert client_users(admin) == ["bob", "default"]
    # Deleting one's own user: the reply comes, then the connection closes
    # (what was pipelined after it is not run).
    own = raw_as(srv, "bob")
    own.send_raw(encode_command(["ACL", "DELUSER", "bob"]) + encode_command(["SET", "k", "v"]))
    assert own.read_reply(TIMEOUT) == b":1\r\n"
    assert_closed(own)
    assert_gone(bob)
    assert admin.exists("k") == 0
    assert client_users(admin) == ["default"]
    alice_py.close()
    bob.close()


def test_deluser_closes_a_blocked_or_transacting_client(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~*", "+@all")
    blocked, multi = raw_as(srv, "alice"), raw_as(srv, "alice")
    blocked.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]))
    wait_blocked(srv, 1)
    assert multi.call("MULTI") == OK and multi.call("SET", "k", "v") == b"+QUEUED\r\n"
    admin.acl_deluser("alice")
    assert_closed(blocked)
    assert_closed(multi)
    wait_blocked(srv, 0)
    admin.xadd("s", {"f": "v"})
    assert admin.exists("k") == 0


@pytest.mark.parametrize("protocol", [2, 3])
def test_subscribers_closed_when_their_channels_are_taken_away(srv, admin, protocol):
    """SETUSER removing a channel (or pattern) a subscriber uses closes that
    subscriber; a subscriber whose channels are all still allowed stays."""
    setuser(admin, "sub", "on", f">{PW}", "resetchannels", "&ch:*", "&news", "&orders", "+@all",
            "~*")
    plain = raw_as(srv, "sub", protocol=protocol)
    pattern = raw_as(srv, "sub", protocol=protocol)
    kept = raw_as(srv, "sub", protocol=protocol)
    assert plain.call("SUBSCRIBE", "ch:1").endswith(b":1\r\n")
    assert pattern.call("PSUBSCRIBE", "ch:*").endswith(b":1\r\n")
    assert kept.call("SUBSCRIBE", "news").endswith(b":1\r\n")
    assert kept.call("SSUBSCRIBE", "orders").endswith(b":1\r\n")
    # Adding channels keeps everyone.
    setuser(admin, "sub", "&more", "&zoo:*")
    assert admin.publish("ch:1", "m1") == 2
    assert b"m1" in plain.read_reply(TIMEOUT) and b"m1" in pattern.read_reply(TIMEOUT)
    setuser(admin, "sub", "resetchannels", "&news", "&orders", "&ch:1")
    assert_closed(pattern)                      # ch:* is no longer one of the patterns
    assert admin.publish("ch:1", "m2") == 1     # &ch:1 still allows the plain one
    assert b"m2" in plain.read_reply(TIMEOUT)
    setuser(admin, "sub", "resetchannels", "&news", "&orders")
    assert_closed(plain)
    assert admin.publish("news", "m3") == 1
    assert b"m3" in kept.read_reply(TIMEOUT)
    setuser(admin, "sub", "allchannels")
    assert kept.call("PING").startswith((b"*2", b"+PONG"))
    kept.close()


def test_multi_exec_checks_commands_when_queued_and_again_at_exec(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~k*", "-@all", "+@string", "+multi", "+exec",
            "+discard")
    raw = raw_as(srv, "alice")
    # Refused while queueing: the transaction is aborted.
    assert raw.call("MULTI") == OK
    assert raw.call("SET", "k1", "v") == b"+QUEUED\r\n"
    assert raw.call("SET", "zz", "v") == b"-NOPERM " + NOPERM_KEY.encode() + b"\r\n"
    assert raw.call("EXEC").startswith(b"-EXECABORT")
    # Rules changed between queueing and EXEC: that command is refused in
    # EXEC's reply, the others run.
    assert raw.call("MULTI") == OK
    assert raw.call("SET", "k1", "v") == b"+QUEUED\r\n"
    assert raw.call("GET", "k1") == b"+QUEUED\r\n"
    assert raw.call("SET", "k2", "v") == b"+QUEUED\r\n"
    setuser(admin, "alice", "-get", "resetkeys", "~k1")
    reply = raw.call("EXEC")
    assert reply.startswith(b"*3\r\n+OK\r\n-NOPERM ACLs rules changed between the moment the "
                            b"transaction was accumulated and the EXEC call.")
    assert reply.count(b"-NOPERM") == 2
    assert admin.mget("k1", "k2", "zz") == ["v", None, None]
    assert [(e["reason"], e["context"], e["object"]) for e in acl_log(admin)] == [
        ("key", "multi", "k2"), ("command", "multi", "get"), ("key", "multi", "zz")]
    raw.close()


def test_blocked_command_checked_again_when_served(srv, admin):
    """A blocked command runs again when its key is ready, and is checked
    again: rules changed meanwhile refuse it (Redis 7.2+, redis/redis
    tests/unit/acl.tcl "blocked command gets rejected when reprocessed
    after permission change"; 7.0.15 served it)."""
    setuser(admin, "consumer", "on", f">{PW}", "~s:*", "-@all", "+@stream", "+@list")
    admin.xgroup_create("s:g", "g", id="$", mkstream=True)
    reader = raw_as(srv, "consumer")
    reader.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s:1", "$"]))
    wait_blocked(srv, 1)
    setuser(admin, "consumer", "resetkeys", "~other:*")
    admin.xadd("s:1", {"f": "v"}, id="1-1")
    assert reader.read_reply(TIMEOUT) == b"-NOPERM " + NOPERM_KEY.encode() + b"\r\n"
    setuser(admin, "consumer", "resetkeys", "~s:*")
    reader.send_raw(encode_command(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS",
                                    "s:g", ">"]))
    wait_blocked(srv, 1)
    setuser(admin, "consumer", "-xreadgroup")
    admin.xadd("s:g", {"f": "v"}, id="2-1")
    assert reader.read_reply(TIMEOUT) == \
        f"-NOPERM {noperm_cmd('consumer', 'xreadgroup')}\r\n".encode()
    assert admin.xpending("s:g", "g")["pending"] == 0  # nothing delivered
    assert admin.xinfo_consumers("s:g", "g") == []
    reader.send_raw(encode_command(["BLPOP", "s:l", "0"]))
    wait_blocked(srv, 1)
    setuser(admin, "consumer", "resetkeys")
    admin.rpush("s:l", "a")
    assert reader.read_reply(TIMEOUT).startswith(b"-NOPERM")
    assert admin.llen("s:l") == 1
    assert [(e["reason"], e["context"], e["object"]) for e in acl_log(admin)] == [
        ("key", "toplevel", "s:l"), ("command", "toplevel", "xreadgroup"),
        ("key", "toplevel", "s:1")]
    assert reader.call("PING").startswith(b"-NOPERM")  # still connected, still checked
    reader.close()


# -- scripts ---------------------------------------------------------------------------------

LIBRARY = """#!lua name=acllib
redis.register_function('setter', function(keys, args) return redis.call('set', keys[1], 'x') end)
redis.register_function('getter', function(keys, args) return redis.call('get', args[1]) end)
redis.register_function('check', function(keys, args) return redis.acl_check_cmd(unpack(args)) end)
"""


@pytest.mark.parametrize("protocol", [2, 3])
def test_scripts_run_commands_as_their_caller(srv, admin, protocol):
    """redis.call inside EVAL and FCALL is checked as the calling user:
    ``ERR ACL failure in script: <the NOPERM text>`` (Redis 7.2+'s words),
    logged with context lua; redis.acl_check_cmd answers without running."""
    admin.set("k1", "orig")
    admin.set("zz", "secret")
    admin.function_load(LIBRARY)
    setuser(admin, "scripter", "on", f">{PW}", "~k*", "-@all", "+eval", "+fcall", "+get")
    with connect(srv, "scripter", PW, protocol) as s:
        with pytest.raises(redis.ResponseError, match=re.escape(
                "ACL failure in script: " + noperm_cmd("scripter", "set"))):
            s.eval("return redis.call('set', KEYS[1], 'x')", 1, "k1")
        with pytest.raises(redis.ResponseError, match=re.escape(
                "ACL failure in script: " + NOPERM_KEY)):
            s.eval("return redis.call('get', 'zz')", 0)
        # pcall hands the refusal to the script as an error reply.
        assert s.eval("local r = redis.pcall('get', 'zz') return r['err']", 0) == \
            "ERR ACL failure in script: " + NOPERM_KEY
        assert s.eval("return redis.call('get', KEYS[1])", 1, "k1") == "orig"
        with pytest.raises(redis.ResponseError, match=re.escape(
                "ACL failure in script: " + noperm_cmd("scripter", "set"))):
            s.fcall("setter", 1, "k1")
        with pytest.raises(redis.ResponseError, match=re.escape(
                "ACL failure in script: " + NOPERM_KEY)):
            s.fcall("getter", 0, "zz")
        # FCALL's own keys are checked before anything runs.
        with pytest.raises(NoPermissionError, match=NOPERM_KEY):
            s.fcall("getter", 1, "zz", "k1")
        assert s.fcall("getter", 0, "k1") == "orig"
        assert s.fcall("check", 0, "get", "k1") == 1
        assert s.fcall("check", 0, "get", "zz") is None
        assert s.fcall("check", 0, "set", "k1", "v") is None
        assert s.eval("return redis.acl_check_cmd('get', 'k9')", 0) == 1
        assert s.eval("return redis.acl_check_cmd('xadd', 'k1', '*', 'f', 'v')", 0) is None
        with pytest.raises(redis.ResponseError, match="Invalid command passed to "
                                                      "redis.acl_check_cmd()"):
            s.eval("return redis.acl_check_cmd('nosuch')", 0)
    assert admin.mget("k1", "zz") == ["orig", "secret"]
    contexts = {(e["context"], e["reason"], e["object"]) for e in acl_log(admin, "50")}
    assert contexts == {("lua", "command", "set"), ("lua", "key", "zz"),
                        ("toplevel", "key", "zz")}


def test_scripts_see_rules_changed_between_calls(srv, admin):
    setuser(admin, "scripter", "on", f">{PW}", "~*", "+@all")
    with connect(srv, "scripter", PW) as s:
        assert s.eval("return redis.call('set', 'k', 'v')", 0) == "OK"
        setuser(admin, "scripter", "-set")
        with pytest.raises(redis.ResponseError, match="ACL failure in script"):
            s.eval("return redis.call('set', 'k', 'w')", 0)
    assert admin.get("k") == "v"


# -- the ACL file, user lines in the configuration file ------------------------------------

def acl_file_lines(path) -> list[str]:
    return path.read_text().splitlines()


def test_acl_save_and_load(srv_with_aclfile):
    """ACL SAVE writes every user, sorted; ACL LOAD replaces them all: the
    clients of users removed are closed, those of users kept stay, with
    the new rules (Redis 7.2+, redis/redis#12171; 7.0 closed everyone)."""
    srv, path = srv_with_aclfile
    admin = connect(srv)
    setuser(admin, "bob", "on", f">{PW}", "~*", "+@all")
    setuser(admin, "alice", "on", f">{PW}", "%R~a:*", "resetchannels", "&ch", "-@all", "+get",
            "+set", "+subscribe", "(~b:* +set)")
    assert admin.execute_command("ACL", "SAVE") == "OK"
    hashed = hashlib.sha256(PW.encode()).hexdigest()
    assert acl_file_lines(path) == [
        f"user alice on sanitize-payload #{hashed} %R~a:* resetchannels &ch -@all +get +set "
        "+subscribe (~b:* resetchannels -@all +set)",
        f"user bob on sanitize-payload #{hashed} ~* resetchannels +@all",
        "user default on nopass sanitize-payload ~* &* +@all",
    ]
    alice, bob, bob_idle = connect(srv, "alice", PW), raw_as(srv, "bob"), raw_as(srv, "bob")
    subscriber = raw_as(srv, "alice")
    assert subscriber.call("SUBSCRIBE", "ch").endswith(b":1\r\n")
    assert alice.set("b:1", "v") is True
    # The file now: bob gone, alice may also write a:*, and no longer use ch.
    path.write_text(
        f"user alice on #{hashed} ~a:* resetchannels -@all +get +set\n"
        "user default on nopass ~* &* +@all\n")
    # Run by bob, whose user goes: its reply, then it is closed too.
    assert bob.call("ACL", "LOAD") == OK
    assert_closed(bob)
    assert_closed(bob_idle)
    assert_closed(subscriber)                   # its channel is no longer allowed
    assert alice.set("a:1", "v") is True        # still connected, under the new rules
    with pytest.raises(NoPermissionError, match=NOPERM_KEY):
        alice.set("b:2", "v")                   # the selector went with the old rules
    assert admin.acl_users() == ["alice", "default"]
    assert admin.ping() is True
    assert client_users(admin) == ["alice", "default"]
    alice.close()
    admin.close()


@pytest.fixture
def srv_with_aclfile(embedded, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user default on nopass ~* &* +@all\n")
    return embedded(save="", aclfile=str(path)), path


def test_a_bad_acl_file_is_refused_and_changes_nothing(srv_with_aclfile):
    srv, path = srv_with_aclfile
    admin = connect(srv)
    setuser(admin, "alice", "on", f">{PW}", "~*", "+@all")
    alice = connect(srv, "alice", PW)
    assert alice.ping() is True
    path.write_text("user default on nopass ~* &* +@all\n"
                    "user carol on >pw +nosuchcommand\n"
                    "not-a-user line\n"
                    "user default on nopass\n")
    with pytest.raises(redis.ResponseError) as refused:
        admin.execute_command("ACL", "LOAD")
    assert str(refused.value) == (
        f"{path}:2: Error in applying operation '+nosuchcommand': Unknown command or category "
        f"name in ACL. {path}:3 should start with user keyword followed by the username. "
        "WARNING: Duplicate user 'default' found on line 4. WARNING: ACL errors detected, no "
        "change to the previously active ACL rules was performed")
    assert admin.acl_users() == ["alice", "default"]
    assert alice.ping() is True
    path.unlink()
    with pytest.raises(redis.ResponseError, match=re.escape(
            f"Error loading ACLs, opening file '{path}': No such file or directory")):
        admin.execute_command("ACL", "LOAD")
    assert admin.acl_users() == ["alice", "default"] and alice.ping() is True
    alice.close()
    admin.close()


def test_acl_save_and_load_need_an_aclfile(srv, admin):
    for sub in ("SAVE", "LOAD"):
        with pytest.raises(redis.ResponseError, match="This Redis instance is not configured "
                                                      "to use an ACL file"):
            admin.execute_command("ACL", sub)


def test_server_started_with_an_aclfile(processes, tmp_path):
    """The users of the aclfile from the start (the default user's password
    included); ACL SAVE writes them back."""
    path = tmp_path / "users.acl"
    path.write_text("user default on >adminpw ~* &* +@all\n"
                    f"user alice on >{PW} ~a:* -@all +get +set\n")
    port = free_port()
    server = processes.tidelog(["--port", str(port), "--save", "", "--aclfile", str(path)],
                               port=port, password="adminpw")
    with redis.Redis(port=port, username="alice", password=PW, decode_responses=True,
                     driver_info=None) as alice:
        assert alice.set("a:1", "v") is True
        with pytest.raises(NoPermissionError):
            alice.get("b:1")
    with server.client() as admin:
        assert admin.acl_users() == ["alice", "default"]
        assert admin.execute_command("ACL", "SAVE") == "OK"
    assert [line.split()[1] for line in acl_file_lines(path)] == ["alice", "default"]
    with redis.Redis(port=port, decode_responses=True) as nobody:
        with pytest.raises(redis.AuthenticationError):
            nobody.ping()
    assert server.terminate() == 0


def test_user_lines_in_the_config_file(processes, tmp_path):
    """``user`` lines define users at start; CONFIG REWRITE writes the users
    as they are now, and a restart from the file has them."""
    conf = tmp_path / "tidelog.conf"
    conf.write_text("save \"\"\n"
                    f"user alice on >{PW} ~a:* -@all +get +set\n"
                    "user default on nopass ~* &* +@all\n")
    port = free_port()
    server = processes.tidelog([str(conf), "--port", str(port)], port=port)
    with server.client() as admin:
        assert admin.acl_users() == ["alice", "default"]
        with redis.Redis(port=port, username="alice", password=PW, decode_responses=True,
                         driver_info=None) as alice:
            assert alice.set("a:1", "v") is True
        setuser(admin, "bob", "on", "nopass", "%R~r:*", "+@read")
        assert admin.execute_command("CONFIG", "REWRITE") == "OK"
    hashed = hashlib.sha256(PW.encode()).hexdigest()
    users = [line for line in conf.read_text().splitlines() if line.startswith("user ")]
    assert users == [
        f"user alice on sanitize-payload #{hashed} ~a:* resetchannels -@all +get +set",
        "user bob on nopass sanitize-payload %R~r:* resetchannels -@all +@read",
        "user default on nopass sanitize-payload ~* &* +@all",
    ]
    assert server.terminate() == 0
    again = processes.tidelog([str(conf), "--port", str(port)], port=port)
    with again.client() as admin:
        assert admin.acl_users() == ["alice", "bob", "default"]
    assert again.terminate() == 0


@pytest.mark.parametrize("case", ["both", "bad-aclfile", "missing-aclfile", "bad-user-line"])
def test_servers_that_refuse_to_start(processes, tmp_path, case):
    """User lines and an aclfile at once, or users that cannot be loaded:
    the server does not start (Redis's reasons)."""
    path = tmp_path / "users.acl"
    conf = tmp_path / "tidelog.conf"
    lines = ["save \"\""]
    if case == "both":
        path.write_text("user default on nopass ~* &* +@all\n")
        lines += [f"user alice on >{PW}", f"aclfile {path}"]
        why = ("Configuring Redis with users defined in redis.conf and at the same setting an "
               "ACL file path is invalid.")
    elif case == "bad-aclfile":
        path.write_text("user alice on +nosuchcommand\n")
        lines.append(f"aclfile {path}")
        why = (f"Aborting Redis startup because of ACL errors: {path}:1: Error in applying "
               "operation '+nosuchcommand': Unknown command or category name in ACL.")
    elif case == "missing-aclfile":
        lines.append(f"aclfile {path}")
        why = (f"Aborting Redis startup because of ACL errors: Error loading ACLs, opening file "
               f"'{path}': No such file or directory")
    else:
        lines.append("user alice on +nosuchcommand")
        why = ("Error loading ACL rule '+nosuchcommand' for the user named 'alice': Unknown "
               "command or category name in ACL")
    conf.write_text("\n".join(lines) + "\n")
    server = processes.tidelog([str(conf), "--port", str(free_port())], ready=False)
    assert server.wait() == 1
    assert why in server.stdout + server.stderr


# -- ACL LOG, INFO's counters ------------------------------------------------------------------

def test_acl_log_entries_grouping_and_length(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~k*", "resetchannels", "-@all", "+get", "+publish")
    raw = raw_as(srv, "alice")
    for _ in range(3):
        raw.call("GET", "zz")
    raw.call("DEL", "k1")
    raw.call("PUBLISH", "ch", "m")
    raw.call("GET", "zz")                                  # joins the first entry again
    raw.call("AUTH", "alice", "wrong")
    raw.call("AUTH", "nosuch", "wrong")
    log = acl_log(admin)
    assert [(e["count"], e["reason"], e["context"], e["object"], e["username"]) for e in log] == [
        (1, "auth", "toplevel", "AUTH", "nosuch"),
        (1, "auth", "toplevel", "AUTH", "alice"),
        (4, "key", "toplevel", "zz", "alice"),
        (1, "channel", "toplevel", "ch", "alice"),
        (1, "command", "toplevel", "del", "alice"),
    ]
    assert sorted(e["entry-id"] for e in log) == list(range(5))
    first = log[2]
    assert first["timestamp-created"] <= first["timestamp-last-updated"]
    assert " user=alice " in first["client-info"] and " cmd=get " in first["client-info"]
    assert [e["object"] for e in acl_log(admin, "2")] == ["AUTH", "AUTH"]
    # acllog-max-len: shortening drops the oldest at once; new entries keep to it.
    assert admin.config_set("acllog-max-len", "3") is True
    assert [e["object"] for e in acl_log(admin)] == ["AUTH", "AUTH", "zz"]
    raw.call("GET", "zy")
    assert [e["object"] for e in acl_log(admin)] == ["zy", "AUTH", "AUTH"]
    assert admin.config_set("acllog-max-len", "0") is True
    assert acl_log(admin) == []
    raw.call("GET", "zx")
    assert acl_log(admin) == []
    assert admin.config_set("acllog-max-len", "128") is True
    raw.call("GET", "zw")
    assert [e["object"] for e in acl_log(admin)] == ["zw"]
    assert admin.execute_command("ACL", "LOG", "RESET") == "OK"
    assert acl_log(admin) == []
    raw.close()


def test_info_counts_refusals_and_resetstat_zeroes_them(srv, admin):
    setuser(admin, "alice", "on", f">{PW}", "~k*", "resetchannels", "-@all", "+get", "+publish")
    assert info_stats(admin) == {"acl_access_denied_auth": 0, "acl_access_denied_cmd": 0,
                                 "acl_access_denied_key": 0, "acl_access_denied_channel": 0}
    raw = raw_as(srv, "alice")
    raw.call("GET", "zz")
    raw.call("GET", "zz")
    raw.call("SET", "k", "v")
    raw.call("PUBLISH", "ch", "m")
    raw.call("AUTH", "alice", "wrong")
    raw.call("HELLO", "3", "AUTH", "alice", "wrong")
    raw.call("AUTH", "nosuch", "x")
    assert info_stats(admin) == {"acl_access_denied_auth": 3, "acl_access_denied_cmd": 1,
                                 "acl_access_denied_key": 2, "acl_access_denied_channel": 1}
    assert admin.config_resetstat() is True
    assert set(info_stats(admin).values()) == {0}
    assert len(acl_log(admin)) == 6  # the log is not a statistic (HELLO and AUTH apart)
    raw.close()


# -- SORT BY / GET ---------------------------------------------------------------------------

def test_sort_by_and_get_need_access_to_every_key(srv, admin):
    admin.rpush("k:list", "2", "1", "3")
    for i in "123":
        admin.set(f"w_{i}", i)
    setuser(admin, "narrow", "on", f">{PW}", "~k:*", "-@all", "+sort", "+sort_ro")
    setuser(admin, "reads", "on", f">{PW}", "%R~*", "~k:*", "-@all", "+sort", "+sort_ro")
    with connect(srv, "narrow", PW) as narrow:
        assert narrow.sort("k:list") == ["1", "2", "3"]
        assert narrow.sort("k:list", by="nosort") == ["2", "1", "3"]  # no pattern, no keys
        with pytest.raises(redis.ResponseError, match="^BY option of SORT denied due to "
                                                      "insufficient ACL permissions.$"):
            narrow.sort("k:list", by="w_*")
        for call in (lambda: narrow.sort("k:list", get="#"),
                     lambda: narrow.sort_ro("k:list", get="w_*")):
            with pytest.raises(redis.ResponseError, match="^GET option of SORT denied due to "
                                                          "insufficient ACL permissions.$"):
                call()
        with pytest.raises(NoPermissionError, match=NOPERM_KEY):
            narrow.sort("k:list", store="elsewhere")
        assert narrow.sort("k:list", store="k:sorted") == 3
    with connect(srv, "reads", PW) as reads:   # reading every key is enough
        assert reads.sort("k:list", by="w_*", get=["#", "w_*"]) == ["1", "1", "2", "2", "3", "3"]
    assert admin.exists("elsewhere") == 0


# -- MONITOR and SLOWLOG never show passwords ----------------------------------------------

def test_monitor_and_slowlog_redact_credentials(srv, admin):
    monitor = raw_as(srv)
    assert monitor.call("MONITOR") == OK
    admin.config_set("slowlog-log-slower-than", "0")
    admin.slowlog_reset()
    setuser(admin, "mon", "on", ">very-secret-1", "~*", "+@all")
    raw = raw_as(srv)
    assert raw.call("AUTH", "mon", "very-secret-1") == OK
    assert raw.call("HELLO", "2", "AUTH", "mon", "very-secret-1").startswith(b"*14")
    assert raw.call("AUTH", "mon", "very-secret-2").startswith(b"-WRONGPASS")
    assert raw.call("ECHO", "the end") == b"$7\r\nthe end\r\n"
    seen = []
    while not seen or b'"the end"' not in seen[-1]:
        seen.append(monitor.read_reply(TIMEOUT))
    shown = b"".join(seen)
    assert b"very-secret" not in shown
    assert b"SETUSER" not in shown.upper()  # an admin command: never shown to monitors
    assert b'"AUTH" "(redacted)" "(redacted)"' in shown
    assert b'"HELLO" "2" "AUTH" "(redacted)" "(redacted)"' in shown
    slow = admin.slowlog_get(20)
    admin.config_set("slowlog-log-slower-than", "10000")
    # redis-py joins each entry's arguments with spaces (as bytes, even decoding).
    commands = [e["command"].decode() for e in slow]
    assert "ACL SETUSER (redacted) (redacted) (redacted) (redacted) (redacted)" in commands
    assert "AUTH (redacted) (redacted)" in commands
    assert "HELLO 2 AUTH (redacted) (redacted)" in commands
    assert not any("very-secret" in c for c in commands)
    hashed = hashlib.sha256(b"very-secret-1").hexdigest()
    assert admin.acl_getuser("mon")["passwords"] == [hashed]
    assert "very-secret" not in " ".join(admin.acl_list())
    monitor.close()
    raw.close()
