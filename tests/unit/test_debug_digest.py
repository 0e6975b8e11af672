"""DEBUG DIGEST and DIGEST-VALUE: equal contents digest the same whatever
the encoding or the order they were built in; any change shows."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.resp.replies import SimpleString


def digest_value(h: Harness, key: str) -> bytes:
    [reply] = h.ok("DEBUG", "DIGEST-VALUE", key)
    return reply.text


def test_set_encodings_digest_alike():
    h = Harness()
    h.ok("SADD", "a", "1", "2", "3")
    h.ok("SADD", "b", "3", "2", "1", "x" * 100)
    h.ok("SREM", "b", "x" * 100)
    db = h.engine.dbs[0]
    assert db.data[b"a"].object_encoding() != db.data[b"b"].object_encoding()
    assert digest_value(h, "a") == digest_value(h, "b")


def test_hash_field_order_and_encoding_do_not_matter():
    h = Harness()
    h.ok("HSET", "a", "f", "1", "g", "2")
    h.ok("HSET", "b", "g", "2", "big", "x" * 100, "f", "1")
    h.ok("HDEL", "b", "big")
    assert digest_value(h, "a") == digest_value(h, "b")
    h.ok("HSET", "b", "f", "3")
    assert digest_value(h, "a") != digest_value(h, "b")


def test_types_and_order_of_lists_matter():
    h = Harness()
    h.ok("RPUSH", "l1", "a", "b")
    h.ok("RPUSH", "l2", "b", "a")
    h.ok("SADD", "s", "a", "b")
    assert len({digest_value(h, k) for k in ("l1", "l2", "s")}) == 3


def test_database_digest_ignores_key_order_but_not_expiry():
    h1, h2 = Harness(), Harness()
    empty = h1.ok("DEBUG", "DIGEST")
    assert empty == SimpleString(b"0" * 40)
    h1.ok("SET", "a", "1")
    h1.ok("SET", "b", "2")
    h2.ok("SET", "b", "2")
    h2.ok("SET", "a", "1")
    assert h1.ok("DEBUG", "DIGEST") == h2.ok("DEBUG", "DIGEST") != empty
    h2.ok("PEXPIREAT", "a", "99999999999999")
    assert h1.ok("DEBUG", "DIGEST") != h2.ok("DEBUG", "DIGEST")
    assert digest_value(h1, "missing") == b"0" * 40
