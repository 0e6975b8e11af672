"""Redis's hidden options against redis-server 7.0.15: CONFIG GET answers
``key-load-delay`` by its exact name only, never for a pattern
(introspection.tcl "CONFIG GET hidden configs"); CONFIG SET checks it as the
integer it is."""

from __future__ import annotations


def test_key_load_delay_is_hidden_from_patterns(differ):
    differ.check("CONFIG", "GET", "key-load-delay")
    differ.check("CONFIG", "GET", "KEY-LOAD-DELAY")
    differ.check("CONFIG", "GET", "key-load*")
    differ.check("CONFIG", "GET", "*load-delay")
    assert b"key-load-delay" not in differ.ours.call("CONFIG", "GET", "*")
    differ.check("CONFIG", "SET", "key-load-delay", "x")
    differ.check("CONFIG", "SET", "key-load-delay", "-5")
    differ.check("CONFIG", "GET", "key-load-delay")
    differ.check("CONFIG", "SET", "key-load-delay", "0")
