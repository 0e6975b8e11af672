"""ACL compared with redis-server 7.0.15: the same users and rules on both,
a generated set of commands run as each user, and the replies and ACL LOG
entries compared.

Where Redis changed on purpose after 7.0 the comparison translates 7.0's
text into the newer one and says so:

* -NOPERM and ACL DRYRUN texts (Redis 7.2's getAclErrorMessage): 7.0 said
  ``this user has no permissions to run the 'get' command`` and ``... to
  access one of the keys used as arguments``; Redis 8 says ``User alice has
  no permissions to run the 'get' command`` and ``No permissions to access
  a key`` (https://redis.io/docs/latest/develop/reference/errors/common/noperm/),
  and ACL DRYRUN names the user (``User alice has no permissions to access
  the 'k' key``; 7.0: ``This user ...``).
* Errors inside scripts: ``ERR ACL failure in script: <the NOPERM text>``
  (7.2+) where 7.0 had three fixed sentences.
* ACL LIST / GETUSER: new users carry ``sanitize-payload`` since 7.2
  (redis/redis#11279), and the command rules are shown in the order they
  were given since 7.2 (7.0 recomputed them from categories, in hash
  order), so those replies are compared as sets of rules.
* ACL LOG entries have three more fields since 7.2 (entry-id,
  timestamp-created, timestamp-last-updated); the seven common ones are
  compared, the client's description and the age aside.
"""

from __future__ import annotations

import re

import pytest

from tests.support.differ_tools import parse, without_idmp_fields
from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential

PASSWORD = "pw-1"

# name -> the rules given to ACL SETUSER (on both servers).
USERS = {
    "reader": ["on", f">{PASSWORD}", "~*", "&*", "-@all", "+@read", "+@connection"],
    "rw-split": ["on", f">{PASSWORD}", "%R~r:*", "%W~w:*", "~rw:*", "&*", "+@all", "-@dangerous"],
    "streams": ["on", f">{PASSWORD}", "~s:*", "-@all", "+@stream", "+ping", "+multi", "+exec"],
    "picky": ["on", f">{PASSWORD}", "~k*", "&news.*", "-@all", "+get", "+set", "+select|0",
              "+config|get", "+client|getname", "+publish", "+subscribe", "+psubscribe", "+eval",
              "+multi", "+exec", "+sort", "+sort_ro"],
    "selectors": ["on", f">{PASSWORD}", "~a:*", "resetchannels", "-@all", "+get",
                  "(~b:*", "+set", "+get)", "(%R~c:*", "+@read)"],
    "nopass-off": ["off", "nopass", "~*", "+@all"],
}

# Commands run as every user: keys of every pattern's shape, channels,
# subcommands, first arguments, and the stream commands whose keys are
# found by parsing (XREAD/XREADGROUP).
COMMANDS = [
    ["PING"], ["GET", "k1"], ["GET", "zz"], ["SET", "k1", "v"], ["SET", "zz", "v"],
    ["SET", "w:1", "v"], ["SET", "w:1", "v", "GET"], ["GET", "r:1"], ["GET", "w:1"],
    ["GET", "rw:1"], ["SET", "rw:1", "v"], ["INCR", "w:2"], ["INCR", "rw:2"], ["DEL", "w:1"],
    ["EXISTS", "r:1"], ["EXISTS", "w:1"], ["TYPE", "zz"], ["STRLEN", "w:1"],
    ["MSET", "w:3", "a", "r:3", "b"], ["COPY", "r:1", "w:9"], ["RENAME", "rw:1", "w:8"],
    ["GET", "a:1"], ["GET", "b:1"], ["SET", "b:1", "v"], ["SET", "a:1", "v"], ["GET", "c:1"],
    ["LRANGE", "c:1", "0", "-1"], ["SET", "c:1", "v"],
    ["SELECT", "0"], ["SELECT", "1"], ["SELECT", "0"], ["CONFIG", "GET", "hz"],
    ["CONFIG", "SET", "hz", "10"], ["CLIENT", "SETNAME", "x"], ["CLIENT", "GETNAME"], ["DBSIZE"],
    ["KEYS", "k1"], ["FLUSHALL"], ["DEBUG", "SLEEP", "0"],
    ["PUBLISH", "news.a", "m"], ["PUBLISH", "sports", "m"], ["SUBSCRIBE", "sports"],
    ["PSUBSCRIBE", "news.*"], ["PSUBSCRIBE", "news.a*"],
    ["XADD", "s:1", "1-1", "f", "v"], ["XADD", "zz", "1-1", "f", "v"], ["XLEN", "s:1"],
    ["XRANGE", "s:1", "-", "+"], ["XGROUP", "CREATE", "s:1", "g", "0"],
    ["XGROUP", "CREATE", "zz", "g", "0", "MKSTREAM"],
    ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s:1", ">"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s:1", "zz", ">", ">"],
    ["XREAD", "COUNT", "1", "STREAMS", "s:1", "0"], ["XREAD", "STREAMS", "r:1", "0"],
    ["XREAD", "STREAMS", "w:1", "0"], ["XACK", "s:1", "g", "1-1"], ["XACK", "zz", "g", "1-1"],
    ["XPENDING", "s:1", "g"], ["XCLAIM", "s:1", "g", "c2", "0", "1-1"],
    ["XAUTOCLAIM", "s:1", "g", "c2", "0", "0"], ["XINFO", "STREAM", "s:1"],
    ["XINFO", "GROUPS", "zz"], ["XTRIM", "s:1", "MAXLEN", "0"], ["XDEL", "s:1", "1-1"],
    ["XSETID", "s:1", "5-5"], ["XGROUP", "DESTROY", "s:1", "g"],
    ["EVAL", "return 1", "0"], ["EVAL", "return redis.call('get', KEYS[1])", "1", "k1"],
    ["EVAL", "return redis.call('get', KEYS[1])", "1", "zz"],
    ["EVAL", "return redis.call('get', 'zz')", "0"],
    ["EVAL", "return redis.call('del', 'k1')", "0"],
    ["EVAL", "return redis.acl_check_cmd('get', 'k1')", "0"],
    ["EVAL", "return redis.acl_check_cmd('get', 'zz')", "0"],
    ["EVAL", "return redis.acl_check_cmd('nosuch')", "0"],
    ["SORT", "k1"], ["SORT", "k1", "BY", "nosort"], ["SORT", "k1", "BY", "w_*"],
    ["SORT", "k1", "GET", "#"], ["SORT_RO", "k1", "GET", "k*"], ["SORT", "k1", "STORE", "zz"],
    ["MULTI"], ["GET", "k1"], ["GET", "zz"], ["EXEC"],
    ["MULTI"], ["GET", "k1"], ["EXEC"],
    ["NOSUCH"], ["GET"], ["ACL", "WHOAMI"], ["ACL", "CAT"], ["ACL", "LIST"],
]

# 7.0's NOPERM sentences and what Redis 8 says in their place (%s: the user).
_OLD_CMD = re.compile(rb"NOPERM this user has no permissions to run the '([^']*)' command")
_OLD_SCRIPT = {
    b"The user executing the script can't run this command or subcommand":
        None,  # needs the user and command: see _translate
    b"The user executing the script can't access at least one of the keys mentioned in "
    b"the command arguments": b"ACL failure in script: No permissions to access a key",
    b"The user executing the script can't publish to the channel mentioned in the command":
        b"ACL failure in script: No permissions to access a channel",
}


def _translate(reply: bytes, user: bytes, argv: list[str]) -> bytes:
    """7.0.15's reply in Redis 8's words (see the module docstring)."""
    reply = _OLD_CMD.sub(rb"NOPERM User " + user.replace(b"\\", b"\\\\") +
                         rb" has no permissions to run the '\1' command", reply)
    reply = reply.replace(
        b"NOPERM this user has no permissions to access one of the keys used as arguments",
        b"NOPERM No permissions to access a key")
    reply = reply.replace(
        b"NOPERM this user has no permissions to access one of the channels used as arguments",
        b"NOPERM No permissions to access a channel")
    for old, new in _OLD_SCRIPT.items():
        if old in reply:
            if new is None:  # the command the script called, as its first argument shows
                called = re.search(r"redis\.call\('(\w+)'", argv[1]).group(1)  # type: ignore[union-attr]
                new = b"ACL failure in script: User %s has no permissions to run the '%s' command" \
                    % (user, called.encode())
            reply = reply.replace(old, new)
    if argv == ["ACL", "CAT"] and reply.startswith(b"*"):
        reply = _with_array_category(reply)
    return reply


def _with_array_category(reply: bytes) -> bytes:
    """7.0.15's ACL CAT plus the ``array`` category of Redis 8.8 (its
    command pages list @array: redis.io/commands/arset/)."""
    count = int(reply[1:reply.index(b"\r\n")])
    return b"*%d" % (count + 1) + reply[reply.index(b"\r\n"):] + b"$5\r\narray\r\n"


_FRAMING = re.compile(rb"^[*$%~:>|]-?\d+$")


def _rules(reply: bytes) -> list[bytes]:
    """Every word of an ACL LIST / GETUSER reply, sorted, without
    ``sanitize-payload`` (order and that flag set aside: see the module
    docstring)."""
    words = []
    for line in reply.split(b"\r\n"):
        if not _FRAMING.match(line):
            words += line.split()
    return sorted(w for w in words if w != b"sanitize-payload")


@pytest.fixture
def acl(differ):
    """Both servers with USERS defined; every user but default deleted, the
    default user as it started and the log empty again afterwards."""
    for client in (differ.ours, differ.theirs):
        client.call("ACL", "LOG", "RESET")
        for name, rules in USERS.items():
            assert client.call("ACL", "SETUSER", name, *rules) == b"+OK\r\n"
    opened: list[RawClient] = []
    yield opened
    for client in opened:
        client.close()
    for client in (differ.ours, differ.theirs):
        client.call("ACL", "DELUSER", *USERS, "extra")
        client.call("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all")
        client.call("ACL", "LOG", "RESET")
        client.call("FLUSHALL")


def _log_fields(reply: bytes) -> list[list[bytes]]:
    """ACL LOG's entries as [count, reason, context, object, username]."""
    entries = []
    for flat in parse(reply):
        entry = dict(zip(flat[::2], flat[1::2]))
        entries.append([entry[k] for k in (b"count", b"reason", b"context", b"object",
                                           b"username")])
    return entries


@pytest.mark.parametrize("user", sorted(set(USERS) - {"nopass-off"}))
def test_commands_run_as_each_user(differ, acl, tidelog, oracle_server, user):
    ours, theirs = RawClient(tidelog.port), RawClient(oracle_server.port)
    acl += [ours, theirs]
    for client in (ours, theirs):
        assert client.call("AUTH", user, PASSWORD) == b"+OK\r\n"
    differ.check("SET", "k1", "1")
    differ.check("SET", "r:1", "2")
    for argv in COMMANDS:
        mine, redis7 = ours.call(*argv), theirs.call(*argv)
        mine = without_idmp_fields(mine, redis7)
        if argv[0] in ("SUBSCRIBE", "PSUBSCRIBE") and mine.startswith((b"*3", b">3")):
            assert redis7 == mine, f"{user} {argv}"
            for client in (ours, theirs):  # leave subscribed mode
                client.call("RESET")
                client.call("AUTH", user, PASSWORD)
            continue
        assert mine == _translate(redis7, user.encode(), argv), (
            f"\nuser {user}, command {argv}\ntidelog: {mine!r}\nredis:   {redis7!r}")
    # The refusals, logged alike (newest first).
    assert _log_fields(differ.ours.call("ACL", "LOG", "100")) == \
        _log_fields(differ.theirs.call("ACL", "LOG", "100"))


def test_the_log_groups_and_counts(differ, acl, tidelog, oracle_server):
    ours, theirs = RawClient(tidelog.port), RawClient(oracle_server.port)
    acl += [ours, theirs]
    for client in (ours, theirs):
        client.call("AUTH", "picky", PASSWORD)
        for _ in range(3):
            client.call("GET", "zz")
        client.call("DEL", "k")
        client.call("GET", "zz")
        client.call("AUTH", "picky", "wrong")
        client.call("AUTH", "nobody", "wrong")
        client.call("HELLO", "3", "AUTH", "reader", "wrong")
        client.call("AUTH", "nopass-off", "x")  # a user that is off
    mine = _log_fields(differ.ours.call("ACL", "LOG"))
    assert mine == _log_fields(differ.theirs.call("ACL", "LOG"))
    assert mine[-1] == [b":1", b"command", b"toplevel", b"del", b"picky"]
    assert [b":4", b"key", b"toplevel", b"zz", b"picky"] in mine
    for count in ("2", "0", "-1"):
        assert _log_fields(differ.ours.call("ACL", "LOG", count)) == \
            _log_fields(differ.theirs.call("ACL", "LOG", count))
    differ.check("ACL", "LOG", "x")
    differ.check("ACL", "LOG", "1", "2")
    differ.check("ACL", "LOG", "RESET")
    differ.check("ACL", "LOG")


SETUSER_CASES = [
    ["+nosuch"], ["+@nosuch"], ["+config|nosuch"], ["+config|get|x"], ["+get|"], ["-get|x"],
    ["x"], ["<nopw"], ["#abc"], ["!abc"], ["(+get ~x"], ["(", "+get"], ["%"], ["%~a"],
    ["%X~a"], ["%RR~z"], ["~a b"], ["~*", "~a"], ["allkeys", "%R~a"], ["&*", "&a"],
    ["allchannels", "&a b"], ["on", "+@all", "-@nosuch"], [">" + "x" * 300, "#" + "0" * 63],
    ["#" + "A" * 64], [">a", "<b"], ["(on)"], ["(+get", "(+set)"],
]


@pytest.mark.parametrize("rules", SETUSER_CASES, ids=lambda r: " ".join(r)[:40])
def test_setuser_errors(differ, acl, rules):
    """Every refused rule (and the rules before it) leaves the user as it was."""
    differ.check("ACL", "SETUSER", "extra", *rules)
    differ.check("ACL", "SETUSER", "extra", "on", ">x", "~k", "+get", *rules)
    _same_permissions(differ, "extra")


# Commands ACL DRYRUN asks about, to compare what users may do (the command
# rules are shown differently since 7.2: see the module docstring).
DRYRUN_PROBES = [["get", "k"], ["get", "x"], ["set", "k", "v"], ["set", "b", "v"], ["select", "0"],
                 ["select", "1"], ["config", "get", "x"], ["config", "set", "x", "y"],
                 ["xadd", "s", "*", "f", "v"], ["xread", "streams", "s", "0"],
                 ["client", "id"], ["hset", "h", "f", "v"], ["flushall"], ["acl", "whoami"],
                 ["publish", "a", "m"], ["psubscribe", "a*"], ["ping"]]


def _same_permissions(differ, user: str) -> None:
    """Both servers show the same flags, passwords, keys and channels for
    the user, and allow it the same commands."""
    def others(reply: bytes) -> list[bytes]:
        return [w for w in _rules(reply) if not w.startswith((b"+", b"-"))]

    assert others(differ.ours.call("ACL", "GETUSER", user)) == \
        others(differ.theirs.call("ACL", "GETUSER", user))
    for probe in DRYRUN_PROBES:
        mine = parse(differ.ours.call("ACL", "DRYRUN", user, *probe))
        theirs = parse(differ.theirs.call("ACL", "DRYRUN", user, *probe))
        assert mine == theirs.replace(b"This user", b"User " + user.encode()), probe


def test_setuser_accepted_rules(differ, acl):
    """Rules both servers take, one after the other on one user."""
    for rules in (["%R"], ["%R~"], ["%RW~x"], ["%WR~y"], ["~*"], ["&*"], ["allkeys"],
                  ["+get|x"], ["+select|0", "+select|1", "+SELECT|1"], ["-config|get"],
                  ["+CONFIG|GET"], ["+@STREAM"], ["on", "nopass", ">a", "<a"], ["resetpass"],
                  [">a", ">a", ">b", "#" + "f" * 64], ["!" + "f" * 64], ["clearselectors"],
                  ["(~a +get)", "(%R~b +@read)"], ["reset"], ["nocommands", "allcommands"],
                  ["skip-sanitize-payload"], ["", "on", ""], ["~a", "~a", "%R~b", "%W~b"],
                  ["+@all", "-@write", "+set"], ["-@all", "+@read", "-get", "+@read"],
                  ["-@all", "+config", "-config|set"], ["+@all", "-config", "+config|get"],
                  ["-@all", "+@stream", "-@write"], ["&a*", "&b", "&a*"]):
        differ.check("ACL", "SETUSER", "extra", *rules)
        _same_permissions(differ, "extra")
    for name in USERS:
        _same_permissions(differ, name)


def test_users_and_their_fields(differ, acl):
    differ.check("ACL", "USERS")
    differ.check("ACL", "WHOAMI")
    differ.check("ACL", "GETUSER", "nosuch")
    differ.check("ACL", "DELUSER", "nosuch", "streams")
    differ.check("ACL", "DELUSER", "default")
    differ.check("ACL", "DELUSER", "reader", "default")
    differ.check("ACL", "USERS")
    differ.check("ACL", "SETUSER", "has space")
    differ.check("ACL", "CAT", "nosuch")
    differ.check("ACL", "CAT", "read", "x")
    assert differ.ours.call("ACL", "CAT") == _with_array_category(differ.theirs.call("ACL", "CAT"))
    # A category's commands, those both servers have (Redis lists them in
    # hash order).
    known = set(parse(differ.theirs.call("COMMAND", "LIST")))
    for category in ("stream", "pubsub", "transaction", "scripting", "connection", "list",
                     "hash", "admin", "dangerous", "fast", "write"):
        mine = {c for c in parse(differ.ours.call("ACL", "CAT", category)) if c in known}
        assert mine == set(parse(differ.theirs.call("ACL", "CAT", category))) & set(
            parse(differ.ours.call("COMMAND", "LIST"))), category
    differ.check("ACL", "GENPASS", "0")
    differ.check("ACL", "GENPASS", "4097")
    differ.check("ACL", "GENPASS", "x")
    differ.check("ACL", "GENPASS", "1", "2")
    for bits in ("1", "5", "256", "4096"):
        assert len(differ.ours.call("ACL", "GENPASS", bits)) == \
            len(differ.theirs.call("ACL", "GENPASS", bits))
    differ.check("ACL", "LOAD")
    differ.check("ACL", "SAVE")
    differ.check("ACL", "HELP")
    differ.check("ACL", "NOSUCH")
    differ.check("ACL", "LIST", "x")


def test_dryrun(differ, acl):
    for argv in (["reader", "get", "k"], ["reader", "set", "k", "v"], ["rw-split", "get", "w:1"],
                 ["rw-split", "set", "r:1", "v"], ["rw-split", "set", "w:1", "v", "GET"],
                 ["picky", "publish", "sports", "m"], ["picky", "config", "get", "x"],
                 ["picky", "config", "set", "x", "y"], ["picky", "select", "1"],
                 ["streams", "xreadgroup", "group", "g", "c", "streams", "s:1", "zz", ">", ">"],
                 ["selectors", "set", "b:1", "v"], ["selectors", "set", "a:1", "v"],
                 ["nosuch", "get", "k"], ["reader", "nosuch"], ["reader", "get"],
                 ["reader", "config"], ["reader", "config", "nosuch"]):
        mine = parse(differ.ours.call("ACL", "DRYRUN", *argv))
        theirs = parse(differ.theirs.call("ACL", "DRYRUN", *argv))
        assert mine == theirs.replace(b"This user", b"User " + argv[0].encode()), argv


def test_exec_checks_queued_commands_again(differ, acl, tidelog, oracle_server):
    """Rules changed after a command was queued: EXEC refuses it (and logs
    it with context multi), the others run."""
    ours, theirs = RawClient(tidelog.port), RawClient(oracle_server.port)
    acl += [ours, theirs]
    for client in (ours, theirs):
        client.call("AUTH", "picky", PASSWORD)
        client.call("MULTI")
        client.call("SET", "k1", "v")
        client.call("GET", "k1")
    differ.check("ACL", "SETUSER", "picky", "-get")
    mine, redis7 = ours.call("EXEC"), theirs.call("EXEC")
    assert mine == redis7
    assert b"NOPERM ACLs rules changed" in mine
    assert _log_fields(differ.ours.call("ACL", "LOG")) == \
        _log_fields(differ.theirs.call("ACL", "LOG"))


def test_auth_and_default_user(differ, acl, tidelog, oracle_server):
    ours, theirs = RawClient(tidelog.port), RawClient(oracle_server.port)
    acl += [ours, theirs]
    pair = (ours, theirs)
    user = [b"default"]  # who the two connections are

    def same(*argv: str) -> bytes:
        mine, redis7 = ours.call(*argv), theirs.call(*argv)
        assert mine == _translate(redis7, user[0], list(argv)), argv
        if argv[0] == "AUTH" and mine == b"+OK\r\n":
            user[0] = argv[1].encode() if len(argv) == 3 else b"default"
        elif argv[0] == "RESET":
            user[0] = b"default"
        return mine

    same("AUTH", "nopass-off", "anything")          # off: refused
    same("ACL", "SETUSER", "nopass-off", "on")
    same("AUTH", "nopass-off", "anything")          # on, nopass: any password
    same("ACL", "WHOAMI")
    same("AUTH", "reader", PASSWORD)
    same("ACL", "WHOAMI")
    same("SET", "k", "v")
    same("RESET")
    same("ACL", "WHOAMI")
    differ.check("ACL", "SETUSER", "default", ">secret")  # the default user now needs it
    for client in pair:
        client.close()
    ours, theirs = RawClient(tidelog.port), RawClient(oracle_server.port)
    acl += [ours, theirs]
    same("PING")
    same("AUTH", "secret")
    same("PING")
    same("ACL", "SETUSER", "default", "nopass")
    same("AUTH", "x")
