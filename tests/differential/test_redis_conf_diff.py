"""The directives Tidelog accepts without acting on them, against
redis-server 7.0.15: CONFIG GET answers their defaults as Redis does, and
CONFIG SET takes and refuses the same values with the same errors (each put
back to its default after).  Options newer than 7.0 (7.0.15 does not know
them) are covered by tests/unit/test_config_file.py.
"""

from __future__ import annotations

import pytest

from tidelog.config import OPTIONS

pytestmark = pytest.mark.differential

# Where the two part on purpose: Redis 8's repl-diskless-load gains
# "flush-before-load" (its error lists one more choice); the oracle runs with
# enable-debug-command yes; Debian's build refuses activedefrag yes (no
# modified jemalloc) and tls-cluster yes (no certificates), values Tidelog
# stores like any other it does not act on.
_SKIP = {"repl-diskless-load", "enable-debug-command", "activedefrag", "tls-cluster"}

NO_EFFECT = sorted(n for n, o in OPTIONS.items() if o.no_effect and n not in _SKIP)

# Every kind of value: good and bad for each type (bool, int, memory,
# percent, enum, strings, lists).
_VALUES = ["x", "", "-1", "0", "1", "7", "99", "101", "1001", "65536", "2147483648", "1kb",
           "3mb", "10%", "101%", "yes", "no", "YES", "local", "clients", "relative",
           "hostname", "panic", "save now", "save nosave", "1 2 3", "1 2", "-2001 0 0",
           "{title}", "{nope}", "a_b.c-d", "a#b"]


def test_no_effect_options_answer_as_redis(differ):
    known = []
    for name in NO_EFFECT:
        if differ.theirs.call("CONFIG", "GET", name) == b"*0\r\n":
            continue  # newer than 7.0
        known.append(name)
        differ.check("CONFIG", "GET", name)
    # The comparison covered them (55 once the cluster-* options took effect).
    assert len(known) >= 50, known


@pytest.mark.parametrize("name", NO_EFFECT)
def test_no_effect_options_set_as_redis(differ, name):
    default = differ.theirs.call("CONFIG", "GET", name)
    if default == b"*0\r\n":
        pytest.skip(f"{name} is newer than redis-server 7.0.15")
    shown = default.split(b"\r\n")[-2].decode()
    try:
        for value in _VALUES:
            differ.check("CONFIG", "SET", name, value)
            differ.check("CONFIG", "GET", name)
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("CONFIG", "SET", name, shown)
    differ.check("CONFIG", "GET", name)
