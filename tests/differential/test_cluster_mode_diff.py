"""Cluster mode's connection commands on a server without cluster support,
byte for byte against redis-server 7.0.15: ASKING, READONLY and READWRITE
are refused, RESTORE-ASKING is RESTORE, and COMMAND INFO describes them as
Redis's table does."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("name", ["ASKING", "READONLY", "READWRITE"])
def test_refused_without_cluster_support(differ, name):
    assert differ.check(name) == b"-ERR This instance has cluster support disabled\r\n"
    differ.check(name, "extra")  # arity first


@pytest.mark.parametrize("name", ["asking", "readonly", "readwrite", "restore-asking"])
def test_command_info(differ, name):
    differ.check("COMMAND", "INFO", name)


def test_command_getkeys_restore_asking(differ):
    assert differ.check("COMMAND", "GETKEYS", "RESTORE-ASKING", "k", "0", "x") == \
        b"*1\r\n$1\r\nk\r\n"


def test_restore_asking_is_restore(differ):
    differ.check("SET", "src", "hello")
    differ.check("EXPIRE", "src", "100")
    raw = differ.ours.call("DUMP", "src")
    assert raw == differ.theirs.call("DUMP", "src")
    payload = raw.split(b"\r\n", 1)[1][:-2]  # the bulk string's bytes
    assert differ.check("RESTORE-ASKING", "k", "0", payload) == b"+OK\r\n"
    assert differ.check("GET", "k") == b"$5\r\nhello\r\n"
    differ.check("RESTORE-ASKING", "k", "0", payload)  # BUSYKEY
    differ.check("RESTORE-ASKING", "k", "0", "bad payload")
    differ.check("RESTORE-ASKING", "k")
    differ.check("SELECT", "1")
    differ.check("SELECT", "0")
