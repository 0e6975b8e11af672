"""Commands and options newer than 7.0 against redis-server 7.0.15: where
7.0 lacks them (``check_newer``: ours as redis.io's page says, 7.0 refusing),
and where they share 7.0's parts (the errors of SUNIONCARD and SDIFFCARD are
SINTERCARD's; AGGREGATE COUNT parses as the other aggregates).
Pages: https://redis.io/docs/latest/commands/sunioncard/,
https://redis.io/docs/latest/commands/sdiffcard/,
https://redis.io/docs/latest/commands/zunionstore/."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.differential


def test_set_cards_are_new(differ):
    for key, members in (("key1", ("a", "b", "c")), ("key2", ("c", "d", "e"))):
        differ.check("SADD", key, *members)
    differ.check_newer("SUNIONCARD", 2, "key1", "key2", ours=b":5\r\n")
    differ.check_newer("SUNIONCARD", 2, "key1", "key2", "LIMIT", 3, ours=b":3\r\n")
    differ.check_newer("SDIFFCARD", 2, "key1", "key2", ours=b":2\r\n")
    differ.check_newer("SDIFFCARD", 2, "key1", "key2", "LIMIT", 1, ours=b":1\r\n")


@pytest.mark.parametrize("name", ["SUNIONCARD", "SDIFFCARD"])
def test_card_errors_match_sintercard(differ, name):
    differ.check("SET", "str", "v")
    for args in ((0, "k"), (-1, "k"), ("x", "k"), (3, "k"), (1, "k", "LIMIT", -1),
                 (1, "k", "LIMIT", "x"), (1, "k", "LIMIT"), (1, "k", "NOPE"), (1, "str"),
                 (2, "k", "str")):
        ours = differ.ours.call(name, *args)
        theirs = differ.theirs.call("SINTERCARD", *args)
        assert ours == theirs, (name, args, ours, theirs)


def test_aggregate_count_is_new(differ):
    differ.check("ZADD", "s1", 1, "foo", 1, "bar")
    differ.check("ZADD", "s2", 2, "foo", 2, "bar")
    differ.check("ZADD", "s3", 3, "foo")
    differ.check_newer("ZUNIONSTORE", "out", 3, "s1", "s2", "s3", "AGGREGATE", "COUNT",
                       ours=b":2\r\n")
    differ.check_newer("ZUNION", 3, "s1", "s2", "s3", "AGGREGATE", "COUNT", "WITHSCORES",
                       ours=b"*4\r\n$3\r\nbar\r\n$1\r\n2\r\n$3\r\nfoo\r\n$1\r\n3\r\n")
    # The rest of the parsing is 7.0's.
    differ.check_all([["ZUNION", 1, "s1", "AGGREGATE", "AVG"], ["ZUNION", 1, "s1", "AGGREGATE"],
                      ["ZDIFF", 1, "s1", "AGGREGATE", "COUNT"],
                      ["ZINTERCARD", 1, "s1", "AGGREGATE", "COUNT"],
                      ["ZINTERCARD", 1, "s1", "AGGREGATE", "SUM"], ["ZINTERCARD", 1, "s1", "WEIGHTS", 1],
                      ["ZUNION", 1, "s1", "AGGREGATE", "SUM", "WITHSCORES"]])
