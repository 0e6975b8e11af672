"""ACL users without a server: the rules, how users are shown, the checks,
the ACL LOG, the ACL file, and a hypothesis test that what ACL LIST shows
rebuilds the same permissions (the invariant Redis checks on every
description it makes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.acl.registry import Acl
from tidelog.acl.selectors import (
    ACL_OK,
    DENIED_CHANNEL,
    DENIED_CMD,
    DENIED_KEY,
    RuleError,
    all_specs,
    hash_password,
    lookup,
)
from tidelog.acl.users import User, default_user, merge_selectors
from tidelog.commands.key_specs import KEY_READ, KEY_WRITE, acl_keys
from tidelog.commands.table import COMMANDS
from tidelog.errors import (
    ACL_RULE_BAD_HASH,
    ACL_RULE_CHANNELS_AFTER_ALL,
    ACL_RULE_KEYS_AFTER_ALL,
    ACL_RULE_NO_SUCH_PASSWORD,
    ACL_RULE_SUBCOMMAND_FIRSTARG,
    ACL_RULE_SYNTAX,
    ACL_RULE_UNKNOWN,
    CommandError,
)


def user(*rules: str) -> User:
    u = User(b"u")
    for rule in merge_selectors([r.encode() for r in rules]):  # type: ignore[union-attr]
        u.apply(rule, False)
    return u


def check(u: User, *argv: str) -> int:
    args = [a.encode() for a in argv]
    spec = lookup(argv[0])
    if spec is not None and spec.subcommands and len(argv) > 1:
        spec = lookup(f"{argv[0]}|{argv[1]}")
    assert spec is not None
    return u.check(spec, args)[0]


# -- rules and how they are shown --------------------------------------------------
def test_a_new_user_and_the_default_user():
    assert User(b"x").describe() == b"off sanitize-payload resetchannels -@all"
    assert default_user().describe() == b"on nopass sanitize-payload ~* &* +@all"
    assert default_user().unrestricted and not User(b"x").unrestricted


@pytest.mark.parametrize("rules, shown", [
    # Redis 7.2+: the command rules as given, lowercased; a rule given again
    # replaces the earlier one for the same command or category.
    (["-@all", "+get", "+set"], b"-@all +get +set"),
    (["-@all", "+set", "+get"], b"-@all +set +get"),
    (["+GET", "+@STREAM"], b"-@all +get +@stream"),
    (["+get", "-get"], b"-@all -get"),
    (["+@read", "-get", "+@read"], b"-@all -get +@read"),
    (["+config|get", "+config"], b"-@all +config"),
    (["+@all", "-config", "+config|get"], b"+@all -config +config|get"),
    (["+select|0", "+SELECT|1", "-select"], b"-@all -select"),
    (["+select|AbC"], b"-@all +select|abc"),
    (["+@all", "-get", "-@all", "+set"], b"-@all +set"),
    (["allcommands", "-get"], b"+@all -get"),
    (["nocommands"], b"-@all"),
])
def test_command_rules_are_shown_as_given(rules, shown):
    assert user(*rules).root.describe_commands() == shown


def test_keys_channels_and_passwords_as_shown():
    u = user("on", ">a", ">a", "#" + "f" * 64, "~k*", "%R~r*", "%W~w*", "%RW~rw*", "%R~k*",
             "&c*", "&c*", "+get")
    assert u.describe() == (b"on sanitize-payload #" + hash_password(b"a") + b" #" + b"f" * 64 +
                            b" ~k* %R~r* %W~w* ~rw* resetchannels &c* -@all +get")
    u.apply(b"<a", False)
    u.apply(b"nopass", False)
    u.apply(b"allkeys", False)
    u.apply(b"allchannels", False)
    assert u.describe() == b"on nopass sanitize-payload ~* &* -@all +get"
    u.apply(b"(~x +set)", False)
    u.apply(b"skip-sanitize-payload", False)
    assert u.describe() == (b"on nopass skip-sanitize-payload ~* &* -@all +get "
                            b"(~x resetchannels -@all +set)")
    u.apply(b"reset", False)
    assert u.describe() == b"off sanitize-payload resetchannels -@all"


@pytest.mark.parametrize("rule, reason", [
    ("+nosuch", ACL_RULE_UNKNOWN), ("+@nosuch", ACL_RULE_UNKNOWN), ("-get|x", ACL_RULE_UNKNOWN),
    ("+config|nosuch", ACL_RULE_UNKNOWN), ("+config|get|x", ACL_RULE_SUBCOMMAND_FIRSTARG),
    ("+get|", ACL_RULE_SYNTAX), ("x", ACL_RULE_SYNTAX), ("%", ACL_RULE_SYNTAX),
    ("%~a", ACL_RULE_SYNTAX), ("%RR~a", ACL_RULE_SYNTAX), ("%X~a", ACL_RULE_SYNTAX),
    ("~a b", ACL_RULE_SYNTAX), ("&a\x00", ACL_RULE_SYNTAX), ("<nopw", ACL_RULE_NO_SUCH_PASSWORD),
    ("#abc", ACL_RULE_BAD_HASH), ("!" + "F" * 64, ACL_RULE_BAD_HASH), ("(on)", ACL_RULE_SYNTAX),
])
def test_rule_errors(rule, reason):
    with pytest.raises(RuleError) as caught:
        user(rule)
    assert caught.value.reason == reason


def test_patterns_after_everything_are_refused():
    with pytest.raises(RuleError) as caught:
        user("allkeys", "%R~a")
    assert caught.value.reason == ACL_RULE_KEYS_AFTER_ALL
    with pytest.raises(RuleError) as caught:
        user("&*", "&a")
    assert caught.value.reason == ACL_RULE_CHANNELS_AFTER_ALL
    assert user("%R").root.describe_keys() == b"%R~"  # an empty pattern, as Redis takes it


def test_selectors_spread_over_arguments_are_joined():
    assert merge_selectors([b"on", b"(+get", b"~a)", b"(+set)"]) == [b"on", b"(+get ~a)", b"(+set)"]
    assert merge_selectors([b"(+get", b"~a"]) == 0


def test_set_user_is_all_or_nothing():
    acl = Acl()
    acl.set_user(b"x", [b"on", b">p", b"~k", b"+get"])
    before = acl.users[b"x"].describe()
    with pytest.raises(CommandError) as caught:
        acl.set_user(b"x", [b"+set", b"~z", b"+nosuch"])
    assert caught.value.message == (b"ERR Error in ACL SETUSER modifier '+nosuch': "
                                    b"Unknown command or category name in ACL")
    assert acl.users[b"x"].describe() == before
    with pytest.raises(CommandError) as caught:
        acl.set_user(b"y", [b"(+get"])
    assert b"y" not in acl.users


def test_the_user_object_stays_the_same():
    """Clients hold the user: SETUSER and ACL LOAD change it in place."""
    acl = Acl()
    first = acl.set_user(b"x", [b"on", b"+get"])
    assert acl.set_user(b"x", [b"+set"]) is first and first.root.allows("set")
    gone, kept = acl.replace_users({b"x": User(b"x")})
    assert gone == [] and first in kept and not first.root.allows("get")
    gone, kept = acl.replace_users({})
    assert gone == [first] and set(acl.users) == {b"default"}


# -- checks -------------------------------------------------------------------------
def test_commands_categories_subcommands_and_first_args():
    u = user("+@read", "-xrange", "+config|get", "+select|0", "~*")
    assert check(u, "get", "k") == ACL_OK
    assert check(u, "xrange", "s", "-", "+") == DENIED_CMD
    assert check(u, "set", "k", "v") == DENIED_CMD
    assert check(u, "config", "get", "x") == ACL_OK
    assert check(u, "config", "set", "x", "y") == DENIED_CMD
    assert check(u, "select", "0") == ACL_OK
    assert check(u, "select", "1") == DENIED_CMD
    assert check(u, "auth", "x") == ACL_OK      # no_auth commands are never refused


def test_read_and_write_key_patterns():
    u = user("+@all", "%R~r:*", "%W~w:*", "~rw:*")
    assert check(u, "get", "r:1") == ACL_OK
    assert check(u, "get", "w:1") == DENIED_KEY
    assert check(u, "set", "w:1", "v") == ACL_OK           # OW update: write only
    assert check(u, "set", "w:1", "v", "GET") == DENIED_KEY  # and read with GET
    assert check(u, "incr", "w:1") == DENIED_KEY           # RW access update
    assert check(u, "incr", "rw:1") == ACL_OK
    assert check(u, "exists", "r:1") == ACL_OK             # no access flag: any pattern
    assert check(u, "xadd", "w:s", "*", "f", "v") == ACL_OK  # RW update: write only
    assert check(u, "xack", "r:s", "g", "1-1") == DENIED_KEY
    # XREADGROUP's keys are read (RO access), the command itself is @write.
    assert check(u, "xreadgroup", "group", "g", "c", "streams", "r:s", ">") == ACL_OK
    assert check(u, "xreadgroup", "group", "g", "c", "streams", "w:s", ">") == DENIED_KEY


def test_xread_keys_skip_the_options():
    """redis/redis#15478: a group, consumer or option value spelled STREAMS
    is not the STREAMS keyword."""
    spec = COMMANDS["xreadgroup"]

    def keys(*argv: str) -> list[bytes]:
        args = [a.encode() for a in argv]
        return [args[i] for i, _ in acl_keys(spec, args)]

    assert keys("XREADGROUP", "GROUP", "g", "STREAMS", "STREAMS", "k", ">") == [b"k"]
    assert keys("XREADGROUP", "GROUP", "STREAMS", "c", "COUNT", "1", "STREAMS", "a", "b", ">",
                ">") == [b"a", b"b"]
    assert keys("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "10", "CLAIM", "5", "NOACK",
                "BLOCK", "0", "STREAMS", "k", ">") == [b"k"]
    assert keys("XREADGROUP", "GROUP", "g", "c", "STREAMS", "k") == []  # odd: no keys
    assert keys("XREADGROUP", "GROUP", "g", "c", "BOGUS", "STREAMS", "k", ">") == []
    assert acl_keys(COMMANDS["xread"], [b"XREAD", b"COUNT", b"STREAMS", b"STREAMS", b"k", b"0"]) \
        == [(4, KEY_READ)]


def test_selectors_and_the_reported_denial():
    u = user("~a:*", "+get", "(~b:*", "+set)")
    assert check(u, "get", "a:1") == ACL_OK
    assert check(u, "set", "b:1", "v") == ACL_OK
    assert check(u, "set", "a:1", "v") == DENIED_KEY       # the key is the highest denial
    assert check(u, "del", "a:1") == DENIED_CMD
    spec = COMMANDS["mset"]
    assert u.check(spec, [b"MSET", b"a:1", b"v", b"b:1", b"v"]) == (DENIED_CMD, 0)
    u2 = user("+mset", "~a:*")
    assert u2.check(spec, [b"MSET", b"a:1", b"v", b"c:1", b"v"]) == (DENIED_KEY, 3)


def test_channels():
    u = user("+@pubsub", "&news.*", "&a")
    assert check(u, "publish", "news.1", "m") == ACL_OK
    assert check(u, "publish", "sport", "m") == DENIED_CHANNEL
    assert check(u, "subscribe", "a", "news.x") == ACL_OK
    assert check(u, "psubscribe", "news.*") == ACL_OK      # a pattern must be one, literally
    assert check(u, "psubscribe", "news.a*") == DENIED_CHANNEL
    assert check(u, "unsubscribe", "sport") == ACL_OK      # never refused


def test_passwords():
    u = user("on", ">secret")
    assert u.password_ok(b"secret") and not u.password_ok(b"other")
    u.apply(b"off", False)
    assert not u.password_ok(b"secret")
    assert user("on", "nopass").password_ok(b"anything")
    assert user("on", "#" + hash_password(b"x").decode()).password_ok(b"x")


def test_full_key_access():
    spec = COMMANDS["sort"]
    argv = [b"SORT", b"k", b"GET", b"*"]
    assert user("+@all", "~*").full_key_access(spec, argv, KEY_READ)
    assert user("+@all", "%R~*").full_key_access(spec, argv, KEY_READ)
    assert not user("+@all", "%W~*", "~k").full_key_access(spec, argv, KEY_READ)
    assert not user("+@all", "~k*").full_key_access(spec, argv, KEY_READ)
    assert user("+@all", "~k", "(~* +sort)").full_key_access(spec, argv, KEY_READ | KEY_WRITE)


# -- the log and the file -----------------------------------------------------------
def test_the_log_groups_recent_entries():
    acl = Acl(log_max=3)
    for now in (0, 10, 20):
        acl.add_log(DENIED_KEY, b"toplevel", b"k", b"u", b"info", now)
    assert len(acl.log) == 1 and acl.log[0].count == 3 and acl.log[0].updated_ms == 20
    acl.add_log(DENIED_KEY, b"toplevel", b"k", b"u", b"info", 60_021)  # over a minute later
    acl.add_log(DENIED_CMD, b"multi", b"get", b"u", b"info", 60_022)
    acl.add_log(DENIED_CMD, b"lua", b"get", b"u", b"info", 60_023)
    assert [e.entry_id for e in acl.log] == [3, 2, 1]  # newest first, three at most


def test_acl_file_round_trip_and_errors():
    acl = Acl()
    acl.set_user(b"alice", [b"on", b">p", b"~a*", b"&c", b"-@all", b"+get", b"(~b +set)"])
    text = acl.file_text()
    assert text.splitlines()[0].startswith(b"user alice on sanitize-payload #")
    again = Acl()
    again.replace_users(again.parse_file(text, b"users.acl"))
    assert again.file_text() == text
    with pytest.raises(CommandError) as caught:
        acl.parse_file(b"user bob on +nosuch\nnot a user line\nuser bob\nuser c (+get\n",
                       b"users.acl")
    assert caught.value.message == (
        b"ERR users.acl:1: Error in applying operation '+nosuch': Unknown command or category "
        b"name in ACL. users.acl:2 should start with user keyword followed by the username. "
        b"WARNING: Duplicate user 'bob' found on line 3. users.acl:4: Unmatched parenthesis in "
        b"selector definition.WARNING: ACL errors detected, no change to the previously active "
        b"ACL rules was performed")


# -- what ACL LIST shows rebuilds the same permissions --------------------------------
_NAMES = sorted(spec.name for spec in all_specs())
_RULES = st.one_of(
    st.sampled_from(["+@all", "-@all", "allcommands", "nocommands", "~*", "allkeys", "resetkeys",
                     "&*", "resetchannels", "on", "off", "nopass", "resetpass", "reset",
                     "clearselectors", ">pw", "%R~r*", "%W~w*", "~k*", "&c*",
                     "+select|0", "+select|1", "+debug|object"]),
    st.builds(lambda sign, c: f"{sign}@{c}", st.sampled_from("+-"),
              st.sampled_from(["read", "write", "stream", "admin", "fast", "slow", "dangerous",
                               "keyspace", "connection", "pubsub", "scripting"])),
    st.builds(lambda sign, name: sign + name, st.sampled_from("+-"), st.sampled_from(_NAMES)),
)


def _permissions(u: User) -> tuple:
    return tuple((s.allkeys, tuple(map(tuple, s.patterns)), s.allchannels, tuple(s.channels),
                  s.future, frozenset(n for n in _NAMES if s.allows(n)),
                  # the first arguments allowed are a set (their order is the rules')
                  tuple(sorted((k, tuple(sorted(a.lower() for a in v)))
                               for k, v in s.firstargs.items())))
                 for s in u.selectors)


@settings(max_examples=200, deadline=None)
@given(st.lists(_RULES, max_size=25), st.lists(st.lists(_RULES, max_size=6), max_size=2))
def test_the_shown_rules_rebuild_the_same_user(rules, selectors):
    u = User(b"u")
    for rule in rules:
        try:
            u.apply(rule.encode(), False)
        except RuleError:
            pass  # a rule that cannot apply here (a pattern after allkeys): skipped
    for sel in selectors:
        inner = [r for r in sel if r not in ("on", "off", "nopass", "resetpass", "reset",
                                              "clearselectors", ">pw")]
        try:
            u.apply(b"(" + " ".join(inner).encode() + b")", False)
        except RuleError:
            pass
    rebuilt = User(b"u")
    for rule in merge_selectors(u.describe().split()):  # type: ignore[union-attr]
        rebuilt.apply(rule, False)
    assert rebuilt.describe() == u.describe()
    assert _permissions(rebuilt) == _permissions(u)
