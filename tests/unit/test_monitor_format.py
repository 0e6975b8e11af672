"""MONITOR's argument escaping (Redis's sdscatrepr) and credential redaction."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.engine import monitor_args, repr_arg


def _unescape(text: bytes) -> bytes:
    """Read a quoted MONITOR argument back (the inverse of repr_arg)."""
    assert text[:1] == b'"' and text[-1:] == b'"'
    body, out, i = text[1:-1], bytearray(), 0
    simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("a"): 7, ord("b"): 8,
              ord('"'): 34, ord("\\"): 92}
    while i < len(body):
        c = body[i]
        if c != 0x5C:
            assert 0x20 <= c <= 0x7E and c != 0x22
            out.append(c)
            i += 1
        elif body[i + 1] == ord("x"):
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        else:
            out.append(simple[body[i + 1]])
            i += 2
    return bytes(out)


def test_escapes():
    assert repr_arg(b"") == b'""'
    assert repr_arg(b"plain text") == b'"plain text"'
    assert repr_arg(b'say "hi"\\') == b'"say \\"hi\\"\\\\"'
    assert repr_arg(b"\n\r\t\x07\x08") == b'"\\n\\r\\t\\a\\b"'
    assert repr_arg(b"\x00\x01\x1f\x7f\x80\xff") == b'"\\x00\\x01\\x1f\\x7f\\x80\\xff"'
    assert repr_arg("é".encode()) == b'"\\xc3\\xa9"'


@settings(max_examples=200)
@given(st.binary(max_size=40))
def test_escape_round_trip(arg):
    shown = repr_arg(arg)
    assert _unescape(shown) == arg
    assert all(0x20 <= c <= 0x7E for c in shown)


def test_redaction():
    assert monitor_args([b"AUTH", b"pw"]) == [b"AUTH", b"(redacted)"]
    assert monitor_args([b"auth", b"u", b"pw"]) == [b"auth", b"(redacted)", b"(redacted)"]
    assert monitor_args([b"HELLO", b"3", b"SETNAME", b"n", b"auth", b"u", b"p"]) == \
        [b"HELLO", b"3", b"SETNAME", b"n", b"auth", b"(redacted)", b"(redacted)"]
    assert monitor_args([b"HELLO", b"3"]) == [b"HELLO", b"3"]
    argv = [b"SET", b"auth", b"x"]
    assert monitor_args(argv) is argv
