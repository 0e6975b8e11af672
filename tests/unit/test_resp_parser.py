"""The RESP request parser: grammar, error texts, limits, and chunking.

Every case goes through ``tr`` (h11's ``tests/test_io.py`` idea): fed whole,
one byte at a time, and followed by trailing data.  The parser answers from
two code paths (the split fast path for whole windows, the exact parser for
everything else), and byte-at-a-time feeding mostly exercises the second,
so ``tr`` also checks the two agree.  Expected errors are the texts Redis
7.0.15 sends after ``-ERR Protocol error: `` (checked against the binary).
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import twins
from tidelog.resp import ProtocolError, QueryBufferLimit, RequestParser
from tidelog.resp.parser import split_inline, string2ll

# Every test runs on both twins of the parser (compiled and pure).
_twin = twins.bind(
    globals(),
    "tidelog.resp.parser",
    ["ProtocolError", "QueryBufferLimit", "RequestParser", "split_inline", "string2ll"],
)

TRAILER = b"*1\r\n$4\r\nPING\r\n"


def multibulk(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def run(chunks, batch: bool = False, **limits) -> tuple[list[list[bytes]], str | None]:
    """Feed ``chunks``, draining commands after each (one at a time with
    ``next_command``, or with ``batch`` all at once with ``next_commands``,
    as a connection does); stop at an error."""
    unauth = limits.pop("unauth", False)
    parser = RequestParser(**limits)
    parser.limit_unauthenticated(unauth)
    commands: list[list[bytes]] = []
    try:
        for chunk in chunks:
            parser.feed(chunk)
            if batch:
                while got := parser.next_commands():
                    assert all(argv and all(type(a) is bytes for a in argv) for argv in got)
                    commands += got
                continue
            while (argv := parser.next_command()) is not None:
                assert argv and all(type(a) is bytes for a in argv)
                commands.append(argv)
    except ProtocolError as exc:
        # The parser is dead from now on.
        with pytest.raises(ProtocolError):
            parser.next_command()
        with pytest.raises(ProtocolError):
            parser.feed(TRAILER)
        return commands, str(exc)
    assert parser.next_command() is None
    return commands, None


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def tr(data: bytes, expected: list[list[bytes]], **limits) -> None:
    """``data`` parses to ``expected`` however it is split and drained."""
    for batch in (False, True):
        assert run([data], batch, **limits) == (expected, None)
        assert run(bytewise(data), batch, **limits) == (expected, None)
        assert run([data + TRAILER], batch, **limits) == (expected + [[b"PING"]], None)
        assert run([data, TRAILER], batch, **limits) == (expected + [[b"PING"]], None)


def tr_error(data: bytes, message: str, before: list[list[bytes]] = (), **limits) -> None:
    """``data`` yields the commands ``before`` and then ``message``, however
    split and drained (all at once: the commands first, the error next)."""
    expected = (list(before), message)
    for batch in (False, True):
        assert run([data], batch, **limits) == expected
        assert run(bytewise(data), batch, **limits) == expected
        assert run([data + TRAILER], batch, **limits) == expected


def tr_incomplete(data: bytes, before: list[list[bytes]] = (), **limits) -> None:
    """``data`` is not an error, and ends in the middle of a request."""
    expected = (list(before), None)
    for batch in (False, True):
        assert run([data], batch, **limits) == expected
        assert run(bytewise(data), batch, **limits) == expected


def test_next_commands_answers_the_good_commands_before_the_error():
    parser = RequestParser()
    parser.feed(TRAILER * 3 + b"*1\r\n$x\r\n" + TRAILER)
    assert parser.next_commands() == [[b"PING"]] * 3
    with pytest.raises(ProtocolError):
        parser.next_commands()
    with pytest.raises(ProtocolError):  # dead from then on
        parser.next_commands()
    assert RequestParser().next_commands() == []


# -- multibulk ------------------------------------------------------------------
def test_one_command():
    tr(multibulk(b"SET", b"key", b"value"), [[b"SET", b"key", b"value"]])


def test_pipeline():
    cmds = [[b"XADD", b"s", b"*", b"f", b"v%d" % i] for i in range(200)]
    tr(b"".join(multibulk(*c) for c in cmds), cmds)


def test_empty_says_whether_anything_is_left_to_hand_over():
    parser = RequestParser()
    assert parser.empty
    parser.feed(b"*1\r\n$4\r\nPI")
    assert not parser.empty and parser.next_commands() == []
    parser.feed(b"NG\r\n" + multibulk(b"PING") * 3)
    assert not parser.empty
    assert parser.next_command() == [b"PING"]
    assert not parser.empty  # the rest may be decoded ahead, or still bytes
    assert parser.next_commands() == [[b"PING"]] * 3
    assert parser.empty
    parser.feed(b"*1\r\n$x\r\n")
    with pytest.raises(ProtocolError):
        parser.next_commands()
    assert not parser.empty  # dead: the error is what it has to say


def test_names_repeated_or_alike_in_a_pipeline():
    # The compiled walk hands the same name object to consecutive requests
    # with equal names: each must still get its own name.
    cmds = [[b"PING"], [b"PING"], [b"PONG"], [b"PING", b"x"], [b"PIN"], [b"PINGS"],
            [b"ping"], [b"PING"], [b"GET", b"PING"], [b"PING"], [b""], [b""], [b"PING"]]
    tr(b"".join(multibulk(*c) for c in cmds), cmds)


def test_empty_and_binary_arguments():
    tr(multibulk(b"ECHO", b""), [[b"ECHO", b""]])
    tricky = b"a\r\nb\r\n*1\r\n$4\r\nPING\r\n\x00\xff\r"
    tr(multibulk(b"ECHO", tricky, b"\r\n"), [[b"ECHO", tricky, b"\r\n"]])
    tr(multibulk(b"x" * 5000, b"\r\n" * 700), [[b"x" * 5000, b"\r\n" * 700]])


def test_empty_requests_are_skipped():
    tr(b"*0\r\n", [])
    tr(b"*-1\r\n*-5\r\n*0\r\n" + multibulk(b"A") + b"*0\r\n", [[b"A"]])


def test_bytes_after_cr_are_not_checked():
    # Redis skips the byte after a header's CR, and the two after a bulk.
    tr(b"*1\rX$4\rYPINGAB", [[b"PING"]])
    tr(b"*2\r\n$1\r\nab\r$1\r\nc\r\n", [[b"a", b"c"]])


def test_count_up_to_int_max_is_accepted():
    tr_incomplete(b"*2147483647\r\n")
    tr_incomplete(b"*2\r\n$1\r\na\r\n")
    tr_incomplete(b"*2\r\n$1\r\na\r\n$1\r\nb\r")


@pytest.mark.parametrize(
    "header",
    [b"*+1", b"*01", b"*-0", b"*", b"*1 ", b"* 1", b"*abc", b"*1a", b"*2147483648",
     b"*99999999999999999999999", b"*1\x00", b"*1_0", b"*\xd9\xa1"],
)
def test_invalid_multibulk_length(header):
    tr_error(header + b"\r\n", "invalid multibulk length")


def test_expected_dollar():
    tr_error(b"*1\r\nfoo\r\n", "expected '$', got 'f'")
    tr_error(b"*2\r\n$1\r\na\r\n:1\r\n", "expected '$', got ':'")
    tr_error(b"*1\r\n*1\r\n", "expected '$', got '*'")
    tr_error(b"*1\r\n\r\n", "expected '$', got '\r'")
    tr_error(b"PING\r\n*1\r\n+OK\r\n", "expected '$', got '+'", before=[[b"PING"]])


def test_expected_dollar_keeps_the_byte():
    _, message = run([b"*1\r\n\xff\r\n"])
    assert message == "expected '$', got '\xff'"
    with pytest.raises(ProtocolError) as info:
        parser = RequestParser()
        parser.feed(b"*1\r\n\xff\r\n")
        parser.next_command()
    assert info.value.message_bytes == b"expected '$', got '\xff'"


@pytest.mark.parametrize(
    "header",
    [b"$-1", b"$04", b"$ 4", b"$4 ", b"$", b"$+4", b"$-0", b"$abc", b"$9223372036854775808",
     b"$-9223372036854775809", b"$1e3"],
)
def test_invalid_bulk_length(header):
    tr_error(b"*1\r\n" + header + b"\r\nPING\r\n", "invalid bulk length")


def test_bulk_length_limit():
    tr(multibulk(b"x" * 10), [[b"x" * 10]], max_bulk_len=10)
    tr_error(multibulk(b"x" * 11), "invalid bulk length", max_bulk_len=10)
    tr_error(multibulk(b"x" * 2000), "invalid bulk length", max_bulk_len=1999)


def test_too_big_count_strings():
    # Redis: more than 65536 bytes from the start of the line and no CR.
    tr_incomplete(b"*" + b"1" * 65535)
    tr_error(b"*" + b"1" * 65536, "too big mbulk count string")
    tr_incomplete(b"*1\r\n$" + b"1" * 65535)
    tr_error(b"*1\r\n$" + b"1" * 65536, "too big bulk count string")
    # The answer does not depend on when the CR arrives (Redis's does).
    tr_error(b"*" + b"1" * 70000 + b"\r\n", "too big mbulk count string")
    tr_error(b"*1\r\n$" + b"1" * 70000 + b"\r\n", "too big bulk count string")
    # A CR within the limit: the line is complete (and wrong).
    tr_error(b"*" + b"1" * 65535 + b"\r\n", "invalid multibulk length")


def test_string2ll():
    good = [b"0", b"1", b"-1", b"1023", b"1024", b"9223372036854775807", b"-9223372036854775808"]
    for s in good:
        assert string2ll(s) == int(s)
    bad = [b"", b"-", b"+1", b"01", b"-0", b"00", b" 1", b"1 ", b"1_0", b"9223372036854775808",
           b"-9223372036854775809", b"0x10", b"1.0", b"\xd9\xa1", b"00000000000000000001"]
    for s in bad:
        assert string2ll(s) is None, s


# -- inline ---------------------------------------------------------------------
def test_inline_basics():
    tr(b"PING\r\n", [[b"PING"]])
    tr(b"PING\n", [[b"PING"]])
    tr(b"PING\r\r\n", [[b"PING"]])
    tr(b"SET  k\tv \r\n", [[b"SET", b"k", b"v"]])
    tr(b"ECHO a\rb\n", [[b"ECHO", b"a", b"b"]])
    tr(b"ECHO \x00\xff\r\n", [[b"ECHO", b"\x00\xff"]])


def test_empty_inline_lines_are_skipped():
    tr(b"\r\n\n   \r\n \t \nPING\r\n", [[b"PING"]])


@pytest.mark.parametrize(
    "line, args",
    [
        (b'ECHO "a b"', [b"ECHO", b"a b"]),
        (b'ECHO ""', [b"ECHO", b""]),
        (b"ECHO ''", [b"ECHO", b""]),
        (b'ECHO "a\\x41\\x4"', [b"ECHO", b"aAx4"]),
        (b'ECHO "\\x4a\\x4A\\xZZ\\x"', [b"ECHO", b"JJxZZx"]),
        (b'ECHO "\\n\\r\\t\\b\\a\\\\\\"\\q"', [b"ECHO", b'\n\r\t\b\a\\"q']),
        (b"ECHO 'it\\'s'", [b"ECHO", b"it's"]),
        (b"ECHO 'a\\nb\\\\' '", [b"ECHO", b"a\\nb\\' "]),  # checked on redis 7.0.15
        (b"ECHO 'say \"hi\"'", [b"ECHO", b'say "hi"']),
        (b"ECHO \"it's\"", [b"ECHO", b"it's"]),
        (b'ECHO a"b c"', [b"ECHO", b"ab c"]),
        (b'ECHO a"b c" d', [b"ECHO", b"ab c", b"d"]),
        (b"ECHO a'b'", [b"ECHO", b"ab"]),
        (b'"a" "b"', [b"a", b"b"]),
        (b'"x"\x0by', [b"x", b"y"]),  # VT after a closing quote is a blank
        (b"ECHO a\x0bb", [b"ECHO", b"a\x0bb"]),  # ... but does not end a word
        (b"\x0b\x0cECHO a\x0c", [b"ECHO", b"a\x0c"]),
        (b'SET k "\\x00\\xff"', [b"SET", b"k", b"\x00\xff"]),
    ],
)
def test_inline_quoting(line, args):
    tr(line + b"\r\n", [args])
    assert split_inline(line) == args


@pytest.mark.parametrize(
    "line",
    [b'ECHO "ab', b"ECHO 'ab", b'ECHO "a"b', b"ECHO 'a'b", b'ECHO "ab\\"', b'"a""b"',
     b'ECHO "ab\\', b"ECHO 'ab\\'", b'"', b"ECHO 'a\\nb\\\\'"],
)
def test_unbalanced_quotes(line):
    tr_error(line + b"\r\n", "unbalanced quotes in request")
    assert split_inline(line) is None


def test_too_big_inline_request():
    tr_incomplete(b"P" * 65536)
    tr_error(b"P" * 65537, "too big inline request")
    tr_error(b"P" * 70000 + b"\r\n", "too big inline request")
    tr(b"ECHO " + b"x" * 65530 + b"\n", [[b"ECHO", b"x" * 65530]])


def test_mixed_inline_and_multibulk():
    data = b"PING\r\n" + multibulk(b"ECHO", b"x y") + b"ECHO 'a b'\n"
    data += multibulk(b"GET", b"k") + b"\n"
    tr(data, [[b"PING"], [b"ECHO", b"x y"], [b"ECHO", b"a b"], [b"GET", b"k"]])


# -- arriving in pieces -----------------------------------------------------------
def test_big_mixed_pipeline_across_split_windows():
    # Several 64 KiB fast-path windows, cut mid-command, with requests the
    # fast path hands to the exact parser (CR LF inside, long values,
    # inline, empty) at random places.
    import random

    rng = random.Random(7)
    commands, data = [], []
    for i in range(6000):
        kind = rng.random()
        if kind < 0.05:
            argv = [b"SET", b"k%d" % i, b"a\r\nb" * rng.randrange(1, 50)]
        elif kind < 0.08:
            argv = [b"SET", b"k%d" % i, b"x" * rng.randrange(1000, 5000)]
        elif kind < 0.10:
            commands.append([b"PING", b"%d" % i])
            data.append(b"PING %d\r\n" % i if kind < 0.09 else b"PING %d\n" % i)
            continue
        elif kind < 0.11:
            data.append(b"*0\r\n")
            continue
        else:
            argv = [b"XADD", b"s", b"*", b"f", b"v%d" % i]
        commands.append(argv)
        data.append(multibulk(*argv))
    blob = b"".join(data)
    assert len(blob) > 4 * 64 * 1024
    assert reference(blob) == (commands, None)
    assert run([blob]) == (commands, None)
    for size in (1000, 4096, 65536, 100_000):
        assert run([blob[i : i + size] for i in range(0, len(blob), size)]) == (commands, None)
    cuts = sorted(rng.sample(range(len(blob)), 300))
    assert run(chunked(blob, cuts)) == (commands, None)


def test_big_bulk_in_pieces():
    value = bytes(range(256)) * 4096  # 1 MiB, with CR LF inside
    data = multibulk(b"SET", b"k", value) + TRAILER
    for size in (1, 7, 1000, 65536, 100_000):
        if size == 1:
            chunks = [data[:100]] + bytewise(data[100:5000]) + [data[5000:]]
        else:
            chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert run(chunks) == ([[b"SET", b"k", value], [b"PING"]], None)


def test_big_bulk_completed_by_several_queued_chunks():
    value = bytes(range(256)) * 400
    data = multibulk(b"SET", b"k", value)
    for split in (len(data), len(data) - 1, len(data) - 2, len(data) - 3):
        parser = RequestParser()
        parser.feed(data[:1000])
        assert parser.next_command() is None
        rest = [data[1000:50_000], data[50_000:split], data[split:], TRAILER[:3], TRAILER[3:]]
        for chunk in rest:
            parser.feed(chunk)
        assert parser.next_command() == [b"SET", b"k", value]
        assert parser.next_command() == [b"PING"]
        assert parser.next_command() is None


def test_big_bulk_is_linear_in_its_size():
    # 16 MiB in 1 KiB pieces: re-joining or re-parsing per piece would be
    # about 16384 * 8 MiB of copying; linear is well under a second.
    value = b"v" * (16 * 1024 * 1024)
    data = multibulk(b"SET", b"k", value)
    parser = RequestParser()
    start = time.perf_counter()
    for i in range(0, len(data), 1024):
        parser.feed(data[i : i + 1024])
        argv = parser.next_command()
    assert argv == [b"SET", b"k", value]
    assert time.perf_counter() - start < 10


def test_many_arguments_in_pieces_are_not_reparsed():
    args = [b"%d" % i for i in range(200_000)]
    data = multibulk(*args)
    parser = RequestParser()
    start = time.perf_counter()
    for i in range(0, len(data), 100):
        parser.feed(data[i : i + 100])
        argv = parser.next_command()
    assert argv == args
    assert time.perf_counter() - start < 10


def test_long_line_one_byte_at_a_time_is_linear():
    parser = RequestParser()
    start = time.perf_counter()
    for _ in range(65000):
        parser.feed(b"x")
        assert parser.next_command() is None
    parser.feed(b"\n")
    assert parser.next_command() == [b"x" * 65000]
    assert time.perf_counter() - start < 10


def test_header_split_at_cr():
    for data in (b"*1\r", b"*1\r\n$4\r", b"*1\r\n$4\r\nPING\r"):
        parser = RequestParser()
        parser.feed(data)
        assert parser.next_command() is None
        rest = (b"*1\r\n$4\r\nPING\r\n")[len(data) :]
        parser.feed(rest)
        assert parser.next_command() == [b"PING"]


def test_feed_copies_mutable_buffers():
    parser = RequestParser()
    buf = bytearray(b"*1\r\n$4\r\nPI")
    parser.feed(buf)
    buf[:] = b"XXXXXXXXXX"
    parser.feed(memoryview(b"NG\r\n"))
    assert parser.next_command() == [b"PING"]


def test_commands_wait_until_asked():
    # A blocked client: more input arrives while commands are still queued.
    parser = RequestParser()
    parser.feed(multibulk(b"A") + multibulk(b"B"))
    assert parser.next_command() == [b"A"]
    parser.feed(b"C\r\n" + multibulk(b"D")[:5])
    parser.feed(multibulk(b"D")[5:])
    assert [parser.next_command() for _ in range(4)] == [[b"B"], [b"C"], [b"D"], None]


# -- limits and the dead state ------------------------------------------------------
def test_query_buffer_limit():
    parser = RequestParser(max_query_buffer=100)
    parser.feed(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$200\r\n" + b"x" * 50)
    assert parser.next_command() is None
    with pytest.raises(QueryBufferLimit) as info:
        parser.feed(b"x" * 60)
    assert str(info.value) == "query buffer limit exceeded"
    assert isinstance(info.value, ProtocolError)
    with pytest.raises(ProtocolError):
        parser.next_command()


def test_query_buffer_limit_counts_arguments_already_read():
    parser = RequestParser(max_query_buffer=100)
    parser.feed(multibulk(b"a" * 40, b"b" * 40)[:-2])  # read: 40 + headers; unparsed: 40
    assert parser.next_command() is None
    assert parser.buffered == 80
    parser.feed(b"\r")
    parser.feed(b"\n" * 19)  # 100: at the limit
    with pytest.raises(QueryBufferLimit):
        parser.feed(b"*")


def test_query_buffer_limit_whole_chunk():
    with pytest.raises(QueryBufferLimit):
        RequestParser(max_query_buffer=10).feed(b"x" * 11)
    parser = RequestParser(max_query_buffer=10)
    parser.feed(b"PING\r\n")
    assert parser.next_command() == [b"PING"]


def test_dead_after_error():
    parser = RequestParser()
    parser.feed(multibulk(b"A") + b"*x\r\n" + multibulk(b"B"))
    assert parser.next_command() == [b"A"]
    for _ in range(2):
        with pytest.raises(ProtocolError, match="^invalid multibulk length$"):
            parser.next_command()
    with pytest.raises(ProtocolError):
        parser.feed(b"PING\r\n")


# -- against a reference model, with hypothesis --------------------------------------
def _ref_ll(s: bytes) -> int | None:
    if not re.fullmatch(rb"-?[1-9][0-9]*|0", s) or len(s) > 20:
        return None
    n = int(s)
    return n if -(2**63) <= n < 2**63 else None


def _ref_line_end(data: bytes, pos: int, term: bytes) -> int | None | str:
    """Index of the terminator, None (incomplete) or "big" (too long)."""
    end = data.find(term, pos, pos + 65537)
    if end >= 0:
        return end
    return "big" if len(data) - pos > 65536 else None


def reference(data: bytes, max_bulk_len: int = 512 * 1024 * 1024):
    """The grammar, written out plainly over a complete input."""
    commands = []
    pos = 0
    while pos < len(data):
        if data[pos] != 0x2A:
            end = _ref_line_end(data, pos, b"\n")
            if end is None:
                return commands, None
            if end == "big":
                return commands, "too big inline request"
            line = data[pos:end]
            pos = end + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            args = split_inline(line)
            if args is None:
                return commands, "unbalanced quotes in request"
            if args:
                commands.append(args)
            continue
        end = _ref_line_end(data, pos, b"\r")
        if end == "big":
            return commands, "too big mbulk count string"
        if end is None or end + 1 >= len(data):
            return commands, None
        count = _ref_ll(data[pos + 1 : end])
        if count is None or count > 2**31 - 1:
            return commands, "invalid multibulk length"
        pos = end + 2
        args = []
        for _ in range(count):
            end = _ref_line_end(data, pos, b"\r")
            if end == "big":
                return commands, "too big bulk count string"
            if end is None or end + 1 >= len(data):
                return commands, None
            if data[pos] != 0x24:
                return commands, "expected '$', got '%s'" % chr(data[pos])
            size = _ref_ll(data[pos + 1 : end])
            if size is None or size < 0 or size > max_bulk_len:
                return commands, "invalid bulk length"
            pos = end + 2
            if pos + size + 2 > len(data):
                return commands, None
            args.append(data[pos : pos + size])
            pos += size + 2
        if args:
            commands.append(args)
    return commands, None


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


argvs = st.lists(st.lists(st.binary(max_size=40), min_size=1, max_size=8), max_size=12)


@given(argvs, st.lists(st.integers(min_value=0), max_size=30))
@settings(max_examples=300, deadline=None)
def test_multibulk_roundtrip(commands, cuts):
    data = b"".join(multibulk(*argv) for argv in commands)
    assert run(chunked(data, cuts)) == (commands, None)
    assert run([data]) == (commands, None)


# Inputs built from the protocol's own pieces, so that errors are reached
# at interesting places and not just at the first byte.
_pieces = st.one_of(
    argvs.map(lambda cs: b"".join(multibulk(*a) for a in cs)),
    st.sampled_from([b"*", b"$", b"\r", b"\n", b"\r\n", b"*1\r\n", b"*2\r\n", b"$1\r\n", b"$0\r\n",
                     b"*0\r\n", b"*-1\r\n", b"$-1\r\n", b"+OK\r\n", b":1\r\n", b"0", b"01", b"-",
                     b'"', b"'", b"\\", b"\\x4", b" ", b"\x0b", b"PING", b"\x00", b"\xff",
                     b"$1023\r\n", b"$1024\r\n", b"*1024\r\n"]),
    st.binary(max_size=10),
)


@given(st.lists(_pieces, max_size=12), st.lists(st.integers(min_value=0), max_size=30))
@settings(max_examples=500, deadline=None)
def test_matches_reference_however_split(pieces, cuts):
    data = b"".join(pieces)
    expected = reference(data)
    assert run([data]) == expected
    assert run(chunked(data, cuts)) == expected


@given(st.lists(_pieces, max_size=12))
@settings(max_examples=200, deadline=None)
def test_matches_reference_byte_at_a_time(pieces):
    data = b"".join(pieces)
    assert run(bytewise(data)) == reference(data)


def quote(arg: bytes) -> bytes:
    """An argument as an inline-request word (double quotes, \\xHH escapes)."""
    out = b'"'
    for byte in arg:
        char = bytes([byte])
        if char in (b'"', b"\\"):
            out += b"\\" + char
        elif 0x20 <= byte < 0x7F:
            out += char
        else:
            out += b"\\x%02x" % byte
    return out + b'"'


@given(
    st.lists(st.binary(max_size=20), min_size=1, max_size=6),
    st.lists(st.integers(min_value=0), max_size=5),
)
@settings(max_examples=300, deadline=None)
def test_inline_quoted_roundtrip(argv, cuts):
    line = b" ".join(quote(a) for a in argv) + b"\r\n"
    assert run(chunked(line, cuts)) == ([argv], None)


# -- a client that must still authenticate -------------------------------------------
def test_unauthenticated_limits():
    """Redis's limits before AUTH (CVE-2021-32675): 10 arguments of 16 KiB."""
    big = b"x" * 16384
    tr(multibulk(*[b"a"] * 10) + multibulk(b"ECHO", big), [[b"a"] * 10, [b"ECHO", big]],
       unauth=True)
    tr_error(multibulk(*[b"a"] * 11), "unauthenticated multibulk length", unauth=True)
    tr_error(multibulk(b"ECHO", big + b"x"), "unauthenticated bulk length", unauth=True)
    tr_error(multibulk(b"a") + b"*2\r\n$4\r\nECHO\r\n$16385\r\n", "unauthenticated bulk length",
             [[b"a"]], unauth=True)
    tr(b"a " * 20 + b"\r\n", [[b"a"] * 20], unauth=True)  # inline requests: no such limit
    tr(multibulk(*[b"a"] * 11) + multibulk(b"ECHO", big + b"x"),
       [[b"a"] * 11, [b"ECHO", big + b"x"]])


def test_unauthenticated_commands_come_one_at_a_time():
    """So that the limits can be lifted between AUTH and what follows it."""
    parser = RequestParser()
    parser.limit_unauthenticated(True)
    big = b"x" * 20000
    parser.feed(multibulk(b"AUTH", b"pw") + multibulk(b"ECHO", big) + TRAILER)
    assert parser.next_commands() == [[b"AUTH", b"pw"]]
    parser.limit_unauthenticated(False)
    assert parser.next_commands() == [[b"ECHO", big], [b"PING"]]
    assert parser.max_query_buffer == 1024**3


def test_unauthenticated_query_buffer():
    parser = RequestParser(max_query_buffer=10 * 1024 * 1024)
    parser.limit_unauthenticated(True)
    with pytest.raises(QueryBufferLimit):
        parser.feed(b"*1\r\n$2000000\r\n" + b"x" * (1024 * 1024))
