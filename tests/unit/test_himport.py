"""HIMPORT (Redis 8.10): the fieldsets as data, then the commands through
Engine.execute -- replies, errors, what HIMPORT SET leaves in the keyspace,
its effects replayed into a fresh engine, and the fieldsets' lifetime (per
connection, RESET, the connection's end, MULTI, scripts).

redis-server 7.0.15 has no HIMPORT, so the expected behaviour comes from
redis.io's pages, cited per test:
  HIMPORT:            https://redis.io/docs/latest/commands/himport/
  HIMPORT PREPARE:    https://redis.io/docs/latest/commands/himport-prepare/
  HIMPORT SET:        https://redis.io/docs/latest/commands/himport-set/
  HIMPORT DISCARD:    https://redis.io/docs/latest/commands/himport-discard/
  HIMPORT DISCARDALL: https://redis.io/docs/latest/commands/himport-discardall/
and, where the pages are silent (error texts, WRONGTYPE, the field order,
scripts), from Redis 8.10's own test suite for the command (its
``unit/type/hash-template`` tests).
"""

from __future__ import annotations

import pytest

from tests.support.engine_harness import Harness
from tidelog import errors
from tidelog.resp.replies import OK, QUEUED, Map, SimpleString
from tidelog.types.fieldsets import DuplicateField, Fieldset, Fieldsets, canonical_key
from tidelog.types.hash import Hash

ARITY = b"ERR wrong number of arguments for '%s' command"


@pytest.fixture
def h():
    return Harness()


def hgetall(h, key="k", client=None) -> list[bytes]:
    """HGETALL flattened (the reply is a Map), in the hash's order."""
    return [x for pair in h.ok("HGETALL", key, client=client).items for x in pair]


# -- the data ---------------------------------------------------------------------------------

def test_fields_take_redis_canonical_order_shorter_names_first():
    # Redis's tests: a HIMPORT hash of age/name/email reads back age, name, email
    # ("length-first sort"), and b/aa as b, aa.
    fs = Fieldset.of([b"name", b"email", b"age"])
    assert fs.fields == (b"age", b"name", b"email")
    assert fs.positions == (2, 0, 1)
    assert Fieldset.of([b"aa", b"b", b"", b"ab"]).fields == (b"", b"b", b"aa", b"ab")
    assert sorted([b"zz", b"a", b"ab"], key=canonical_key) == [b"a", b"ab", b"zz"]


def test_values_pair_with_fields_by_declared_position():
    fs = Fieldset.of([b"name", b"email", b"age"])
    pairs = fs.pairs([b"alice", b"a@x", b"30"])
    assert list(pairs.items()) == [(b"age", b"30"), (b"name", b"alice"), (b"email", b"a@x")]
    assert len(fs) == 3


@pytest.mark.parametrize("declared", [[b"a", b"a", b"b"], [b"a", b"b", b"a"], [b"s", b"s"],
                                      [b"", b""]])
def test_a_field_named_twice_is_refused(declared):
    with pytest.raises(DuplicateField):
        Fieldset.of(declared)


def test_fieldsets_by_name_prepare_replaces_and_a_failed_prepare_keeps_the_old():
    sets = Fieldsets()
    sets.prepare(b"u", [b"a", b"b"])
    sets.prepare(b"", [b"x"])  # the empty name is a name
    assert len(sets) == 2
    sets.prepare(b"u", [b"x", b"y", b"z"])
    assert sets.get(b"u").fields == (b"x", b"y", b"z")
    with pytest.raises(DuplicateField):
        sets.prepare(b"u", [b"q", b"q"])
    assert sets.get(b"u").fields == (b"x", b"y", b"z")
    with pytest.raises(DuplicateField):
        sets.prepare(b"new", [b"q", b"q"])
    assert sets.get(b"new") is None
    assert sets.discard(b"u") is True and sets.discard(b"u") is False
    assert sets.discard_all() == 1 and sets.discard_all() == 0 and len(sets) == 0


def test_memory_counts_what_is_held_and_returns_to_zero():
    sets = Fieldsets()
    sets.prepare(b"u", [b"name", b"email"])
    assert sets.memory == 1 + 9 + 2 * 8
    sets.prepare(b"u", [b"id"])  # replaced: the old one is counted off
    assert sets.memory == 1 + 2 + 8
    sets.prepare(b"orders", [b"a", b"b", b"c"])
    with pytest.raises(DuplicateField):
        sets.prepare(b"orders", [b"x", b"x"])
    assert sets.memory == 11 + 6 + 3 + 24
    sets.discard(b"u")
    assert sets.memory == 6 + 3 + 24
    sets.discard_all()
    assert sets.memory == 0


# -- replies and errors -----------------------------------------------------------------------

def test_workflow_of_the_himport_page(h):
    # https://redis.io/docs/latest/commands/himport-set/ (Examples)
    assert h.ok("HIMPORT", "PREPARE", "u", "name", "email", "age") == OK
    assert h.ok("HIMPORT", "SET", "user:1", "u", "alice", "alice@example.com", "30") == OK
    assert h.ok("HIMPORT", "SET", "user:2", "u", "bob", "bob@example.com", "25") == OK
    assert h.ok("HGET", "user:1", "name") == b"alice"
    assert h.ok("HGET", "user:1", "email") == b"alice@example.com"
    assert h.ok("HGET", "user:1", "age") == b"30"
    assert hgetall(h, "user:2") == [b"age", b"25", b"name", b"bob", b"email", b"bob@example.com"]
    assert h.ok("TYPE", "user:1") == SimpleString(b"hash")  # an ordinary hash
    assert h.ok("HLEN", "user:2") == 3


def test_discard_and_discardall_count(h):
    # https://redis.io/docs/latest/commands/himport-discard/ and -discardall/ (Examples)
    assert h.ok("HIMPORT", "DISCARDALL") == 0
    h.ok("HIMPORT", "PREPARE", "u", "name", "email", "age")
    assert h.ok("HIMPORT", "DISCARD", "u") == 1
    assert h.ok("HIMPORT", "DISCARD", "u") == 0
    h.ok("HIMPORT", "PREPARE", "u", "name", "email", "age")
    h.ok("HIMPORT", "PREPARE", "o", "id", "total")
    h.ok("HIMPORT", "PREPARE", "o", "id")  # a name prepared again is still one fieldset
    assert h.ok("HIMPORT", "DISCARDALL") == 2
    assert h.err("HIMPORT", "SET", "k", "o", "1") == errors.HIMPORT_NO_SUCH_FIELDSET


def test_discard_leaves_the_hashes_made_from_it(h):
    # https://redis.io/docs/latest/commands/himport-discard/ (Details)
    h.ok("HIMPORT", "PREPARE", "f", "a", "b", "c")
    h.ok("HIMPORT", "SET", "k", "f", "1", "2", "3")
    h.ok("HIMPORT", "DISCARD", "f")
    assert hgetall(h) == [b"a", b"1", b"b", b"2", b"c", b"3"]
    assert h.err("HIMPORT", "SET", "k2", "f", "1", "2", "3") == errors.HIMPORT_NO_SUCH_FIELDSET


@pytest.mark.parametrize("argv, name", [
    (["HIMPORT"], b"himport"),
    (["HIMPORT", "PREPARE"], b"himport|prepare"),
    (["HIMPORT", "PREPARE", "fs"], b"himport|prepare"),
    (["HIMPORT", "SET"], b"himport|set"),
    (["HIMPORT", "SET", "k"], b"himport|set"),
    (["HIMPORT", "SET", "k", "fs"], b"himport|set"),
    (["HIMPORT", "DISCARD"], b"himport|discard"),
    (["HIMPORT", "DISCARD", "a", "b"], b"himport|discard"),
    (["HIMPORT", "DISCARDALL", "extra"], b"himport|discardall"),
])
def test_argument_counts(h, argv, name):
    # Redis's "HIMPORT argument validation" test; arities from the pages' metadata.
    assert h.err(*argv) == ARITY % name


@pytest.mark.parametrize("sub", ["foobar", "HELP", "help"])
def test_unknown_subcommands_and_no_help(h, sub):
    # Redis 8.10 has no HIMPORT HELP: it is an unknown subcommand like any other.
    assert h.err("HIMPORT", sub) == b"ERR unknown subcommand '%s'. Try HIMPORT HELP." % sub.encode()


def test_subcommand_names_are_case_insensitive(h):
    assert h.ok("himport", "prepare", "u", "a") == OK
    assert h.ok("HImport", "Set", "k", "u", "1") == OK
    assert h.ok("himport", "discardALL") == 1


@pytest.mark.parametrize("fields", [["a", "a", "b"], ["a", "b", "a"], ["same", "same"]])
def test_duplicate_fields_are_an_error_and_register_nothing(h, fields):
    # https://redis.io/docs/latest/commands/himport-prepare/ (Details)
    assert h.err("HIMPORT", "PREPARE", "fs", *fields) == errors.HIMPORT_DUPLICATE_FIELD
    assert h.err("HIMPORT", "SET", "k", "fs", *["v"] * len(fields)) == \
        errors.HIMPORT_NO_SUCH_FIELDSET


def test_a_failed_prepare_keeps_the_name_as_it_was(h):
    h.ok("HIMPORT", "PREPARE", "fs", "x", "y")
    assert h.err("HIMPORT", "PREPARE", "fs", "q", "q") == errors.HIMPORT_DUPLICATE_FIELD
    assert h.ok("HIMPORT", "SET", "k", "fs", "1", "2") == OK
    assert hgetall(h) == [b"x", b"1", b"y", b"2"]


def test_prepare_again_replaces_the_definition(h):
    # https://redis.io/docs/latest/commands/himport-prepare/ (fieldset-name)
    h.ok("HIMPORT", "PREPARE", "fs", "a", "b")
    h.ok("HIMPORT", "PREPARE", "fs", "x", "y", "z")
    assert h.err("HIMPORT", "SET", "k", "fs", "1", "2") == errors.HIMPORT_VALUE_COUNT
    h.ok("HIMPORT", "SET", "k", "fs", "1", "2", "3")
    assert hgetall(h) == [b"x", b"1", b"y", b"2", b"z", b"3"]


@pytest.mark.parametrize("values", [["1"], ["1", "2", "3", "4"]])
def test_the_value_count_must_match(h, values):
    # https://redis.io/docs/latest/commands/himport-set/ (Details): too few and too many alike.
    h.ok("HIMPORT", "PREPARE", "fs", "a", "b", "c")
    assert h.err("HIMPORT", "SET", "k", "fs", *values) == errors.HIMPORT_VALUE_COUNT
    assert h.ok("EXISTS", "k") == 0


def test_empty_field_and_fieldset_names(h):
    # Redis's tests: "" is a field name and a fieldset name like any other.
    h.ok("HIMPORT", "PREPARE", "", "f1", "f2")
    h.ok("HIMPORT", "SET", "k", "", "v1", "v2")
    h.ok("HIMPORT", "PREPARE", "fs", "", "b")
    h.ok("HIMPORT", "SET", "k2", "fs", "va", "vb")
    assert hgetall(h) == [b"f1", b"v1", b"f2", b"v2"]
    assert h.ok("HGET", "k2", "") == b"va"


def test_fields_read_back_in_canonical_order(h):
    # Redis's tests: HGETALL answers f1 v1 f2 v2 3 3 as 3 3 f1 v1 f2 v2, and
    # fieldsets declaring one set of fields in other orders make the same hash.
    h.ok("HIMPORT", "PREPARE", "fs", "f1", "f2", "3")
    h.ok("HIMPORT", "SET", "k", "fs", "v1", "v2", "3")
    assert hgetall(h) == [b"3", b"3", b"f1", b"v1", b"f2", b"v2"]
    h.ok("HIMPORT", "PREPARE", "o2", "c", "b", "a")
    h.ok("HIMPORT", "SET", "k2", "o2", "vc", "vb", "va")
    assert hgetall(h, "k2") == [b"a", b"va", b"b", b"vb", b"c", b"vc"]
    assert h.ok("HKEYS", "k2") == [b"a", b"b", b"c"]


# -- the key ----------------------------------------------------------------------------------

def test_another_type_at_the_key_is_wrongtype_before_the_fieldset_is_looked_at(h):
    # Redis's test "HIMPORT SET refuses to overwrite a non-hash key (WRONGTYPE)".
    h.ok("SET", "s", "string value")
    assert h.err("HIMPORT", "SET", "s", "nosuchfs", "1") == errors.WRONGTYPE
    h.ok("HIMPORT", "PREPARE", "u", "name")
    assert h.err("HIMPORT", "SET", "s", "u", "x") == errors.WRONGTYPE
    assert h.ok("GET", "s") == b"string value"


def test_an_existing_hash_is_replaced_whole_with_its_ttls(h):
    # https://redis.io/docs/latest/commands/himport-set/: "If the key already exists, it is
    # overwritten"; Redis replaces it as RESTORE ... REPLACE with no TTL would.
    h.ok("HSET", "k", "old", "v", "name", "x")
    h.ok("PEXPIRE", "k", 60_000)
    h.ok("HEXPIRE", "k", 100, "FIELDS", 1, "name")
    h.ok("HIMPORT", "PREPARE", "u", "name", "email")
    h.ok("HIMPORT", "SET", "k", "u", "dave", "d@x")
    assert hgetall(h) == [b"name", b"dave", b"email", b"d@x"]
    assert h.ok("PTTL", "k") == -1
    assert h.ok("HTTL", "k", "FIELDS", 1, "name") == [-1]


def test_an_expired_key_counts_as_missing(h):
    h.ok("SET", "s", "v", "PX", 10)
    h.clock.advance(20)
    h.take_effects()
    h.ok("HIMPORT", "PREPARE", "u", "a")
    h.ok("HIMPORT", "SET", "s", "u", "1")
    assert hgetall(h, "s") == [b"a", b"1"]


def test_encoding_follows_the_hash_thresholds(h):
    # Redis stores these as template-listpack/template-array; here they are
    # ordinary hashes, listpack or hashtable by the usual thresholds.
    h.ok("CONFIG", "SET", "hash-max-listpack-entries", 4)
    h.ok("HIMPORT", "PREPARE", "small", "a", "b")
    h.ok("HIMPORT", "SET", "k1", "small", "1", "2")
    assert h.ok("OBJECT", "ENCODING", "k1") == b"listpack"
    h.ok("HIMPORT", "SET", "k2", "small", "1", "x" * 65)
    assert h.ok("OBJECT", "ENCODING", "k2") == b"hashtable"
    h.ok("HIMPORT", "PREPARE", "wide", *[f"f{i}" for i in range(5)])
    h.ok("HIMPORT", "SET", "k3", "wide", *range(5))
    assert h.ok("OBJECT", "ENCODING", "k3") == b"hashtable"
    value = h.engine.dbs[0].data[b"k3"]
    assert isinstance(value, Hash)
    value.check(4, 64)


# -- effects ------------------------------------------------------------------------------------

def test_effects_are_hset_and_del_hset_when_the_key_existed(h):
    h.ok("HIMPORT", "PREPARE", "u", "name", "email", "age")
    h.ok("HIMPORT", "DISCARD", "u")
    h.ok("HIMPORT", "PREPARE", "u", "name", "email", "age")
    assert h.take_effects() == []  # fieldsets are no data
    h.ok("HIMPORT", "SET", "k", "u", "alice", "a@x", "30")
    assert h.effects == [[(0, [b"HSET", b"k", b"age", b"30", b"name", b"alice",
                               b"email", b"a@x"])]]
    h.effects.clear()
    h.ok("HIMPORT", "SET", "k", "u", "bob", "b@x", "31")
    assert h.effects == [[(0, [b"MULTI"]), (0, [b"DEL", b"k"]),
                          (0, [b"HSET", b"k", b"age", b"31", b"name", b"bob", b"email", b"b@x"]),
                          (0, [b"EXEC"])]]
    h.effects.clear()
    h.err("HIMPORT", "SET", "k", "u", "1")
    h.err("HIMPORT", "SET", "k", "nope", "1")
    assert h.take_effects() == []


def test_replayed_effects_rebuild_the_same_hashes(h):
    h.ok("HSET", "k", "stale", "1")
    h.ok("EXPIRE", "k", 100)
    h.ok("HIMPORT", "PREPARE", "u", "b", "aa", "c")
    h.ok("HIMPORT", "SET", "k", "u", "1", "2", "3")
    h.ok("SELECT", 3)
    h.ok("HIMPORT", "SET", "k", "u", "4", "5", "6")  # SELECT keeps the fieldsets
    replica = Harness()
    aof = replica.new_client(kind="aof")
    for batch in h.effects:
        for db, argv in batch:
            if argv != [b"EXEC"]:
                replica.ok("SELECT", db, client=aof)
            replica.ok(*argv, client=aof)
    for db in (0, 3):
        h.ok("SELECT", db)
        replica.ok("SELECT", db, client=aof)
        assert replica.ok("HGETALL", "k", client=aof) == h.ok("HGETALL", "k")
        assert replica.ok("TTL", "k", client=aof) == -1 == h.ok("TTL", "k")
    assert hgetall(h) == [b"b", b"4", b"c", b"6", b"aa", b"5"]


def test_keyspace_events(h):
    events = h.new_client()
    h.ok("CONFIG", "SET", "notify-keyspace-events", "KEA")
    h.ok("PSUBSCRIBE", "__key*__:*", client=events)
    events.inbox.clear()
    h.ok("HIMPORT", "PREPARE", "u", "b", "a")
    assert events.inbox == []
    h.ok("HIMPORT", "SET", "k", "u", "1", "2")
    got = [(m.items[2], m.items[3]) for m in events.inbox]
    assert got == [(b"__keyspace@0__:k", b"hset"), (b"__keyevent@0__:hset", b"k")]


# -- the fieldsets' lifetime ------------------------------------------------------------------

def test_fieldsets_belong_to_one_connection(h):
    # https://redis.io/docs/latest/commands/himport/ (Details): not visible to other clients.
    other = h.new_client()
    h.ok("HIMPORT", "PREPARE", "fs", "a", "b", client=other)
    assert h.err("HIMPORT", "SET", "k", "fs", "1", "2") == errors.HIMPORT_NO_SUCH_FIELDSET
    assert h.ok("HIMPORT", "SET", "k", "fs", "1", "2", client=other) == OK
    assert h.ok("HIMPORT", "DISCARDALL") == 0
    assert h.ok("HIMPORT", "DISCARDALL", client=other) == 1


def test_reset_drops_the_fieldsets(h):
    # https://redis.io/docs/latest/commands/himport/ (Details): discarded on RESET.
    h.ok("HIMPORT", "PREPARE", "fs", "a", "b", "c")
    h.ok("HIMPORT", "SET", "k1", "fs", "1", "2", "3")
    h.ok("RESET")
    assert h.client.himport is None
    assert h.err("HIMPORT", "SET", "k2", "fs", "1", "2", "3") == errors.HIMPORT_NO_SUCH_FIELDSET
    assert hgetall(h, "k1") == [b"a", b"1", b"b", b"2", b"c", b"3"]


def test_the_connection_end_drops_the_fieldsets(h):
    other = h.new_client()
    h.ok("HIMPORT", "PREPARE", "fs", "a", client=other)
    assert other.himport is not None
    h.engine.client_closed(other)
    assert other.himport is None and other.id not in h.engine.clients


def test_discarding_the_last_fieldset_keeps_nothing_on_the_client(h):
    h.ok("HIMPORT", "PREPARE", "fs", "a")
    h.ok("HIMPORT", "DISCARD", "fs")
    assert h.client.himport is None


def test_prepare_and_set_inside_multi(h):
    # Redis's "HIMPORT PREPARE/SET inside MULTI/EXEC works".
    h.ok("MULTI")
    assert h.ok("HIMPORT", "PREPARE", "fs", "a", "b", "c") == QUEUED
    assert h.ok("HIMPORT", "SET", "k", "fs", "v1", "v2", "v3") == QUEUED
    h.take_effects()
    assert h.ok("EXEC") == [OK, OK]
    assert hgetall(h) == [b"a", b"v1", b"b", b"v2", b"c", b"v3"]
    assert h.take_effects() == [[b"HSET", b"k", b"a", b"v1", b"b", b"v2", b"c", b"v3"]]
    h.ok("MULTI")
    h.ok("HIMPORT", "DISCARDALL")
    assert h.ok("EXEC") == [1]
    assert h.err("HIMPORT", "SET", "k", "fs", "1", "2", "3") == errors.HIMPORT_NO_SUCH_FIELDSET


def test_each_script_call_starts_without_fieldsets(h):
    # Redis's "EVAL invocations do not share session-local fieldsets".
    h.ok("HIMPORT", "PREPARE", "fs", "a")  # the caller's are not the script's either
    assert h.ok("EVAL", "redis.call('HIMPORT','PREPARE','fs','a'); return 'OK'", 0) == b"OK"
    assert errors.HIMPORT_NO_SUCH_FIELDSET[4:] in \
        h.err("EVAL", "return redis.call('HIMPORT','SET','key','fs','1')", 0)
    assert h.ok("EVAL", "redis.call('HIMPORT','PREPARE','fs','a') "
                        "return redis.call('HIMPORT','SET','key','fs','1')", 0) == OK
    assert hgetall(h, "key") == [b"a", b"1"]
    assert h.ok("HIMPORT", "DISCARDALL") == 1


def test_acl_tells_prepare_from_set(h):
    # The pages' ACL categories: PREPARE is @hash @slow, SET also @write.
    h.ok("ACL", "SETUSER", "loader", "on", "nopass", "+@all", "-@write", "~*")
    h.ok("AUTH", "loader", "x")
    assert h.ok("HIMPORT", "PREPARE", "fs", "a") == OK
    assert h.err("HIMPORT", "SET", "k", "fs", "1").startswith(b"NOPERM")
    h.ok("AUTH", "default", "x")
    h.ok("ACL", "SETUSER", "loader", "+@write", "-himport|set")
    h.ok("AUTH", "loader", "x")
    assert h.err("HIMPORT", "SET", "k", "fs", "1").startswith(b"NOPERM")
    assert h.ok("HIMPORT", "DISCARD", "fs") == 1


def names(reply) -> list[bytes]:
    """The texts of a COMMAND INFO set of flags or categories."""
    return [x.text if isinstance(x, SimpleString) else x for x in reply.items]


# -- COMMAND ------------------------------------------------------------------------------------

def test_command_info_and_docs(h):
    info = h.ok("COMMAND", "INFO", "himport")[0]
    assert info[:2] == [b"himport", -2]
    assert names(info[6]) == [b"@hash", b"@slow"]
    subs = {s[0]: s for s in info[9]}
    assert set(subs) == {b"himport|prepare", b"himport|set", b"himport|discard",
                         b"himport|discardall"}
    prepare, set_ = subs[b"himport|prepare"], subs[b"himport|set"]
    assert prepare[1] == -4 and names(prepare[2]) == [b"denyoom"]
    assert names(prepare[6]) == [b"@hash", b"@slow"]
    assert set_[1:6] == [-5, set_[2], 2, 2, 1] and names(set_[2]) == [b"write", b"denyoom"]
    assert names(set_[6]) == [b"@write", b"@hash", b"@slow"]
    spec = dict(set_[8].items[0].items)
    assert names(spec[b"flags"]) == [b"OW", b"update"]
    assert subs[b"himport|discard"][1] == 3 and subs[b"himport|discardall"][1] == 2
    assert h.ok("COMMAND", "GETKEYS", "HIMPORT", "SET", "k", "fs", "1") == [b"k"]
    docs = dict(dict(h.ok("COMMAND", "DOCS", "himport").items)[b"himport"].items)
    assert docs[b"since"] == b"8.10.0" and docs[b"group"] == b"hash"
    sub_docs = docs[b"subcommands"]
    assert isinstance(sub_docs, Map)
    assert dict(dict(sub_docs.items)[b"himport|set"].items)[b"complexity"] == \
        b"O(N) where N is the number of fields in the fieldset."
