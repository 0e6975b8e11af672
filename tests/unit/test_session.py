"""The sans-IO session driven with bytes alone: no sockets, no loop."""

from __future__ import annotations

import tidelog.commands  # noqa: F401  (registers the commands)
from tidelog import errors
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.resp import RequestParser
from tidelog.server.session import Session


def cmd(*argv: bytes) -> bytes:
    return b"*%d\r\n" % len(argv) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in argv)


def session(engine: Engine | None = None) -> Session:
    engine = engine or Engine(Config())
    return Session(engine, engine.new_client(), RequestParser())


def feed(s: Session, data: bytes) -> tuple[bytes, bool]:
    s.receive(data)
    s.run()
    out, close = s.drain()
    return bytes(out), close


PIPELINE = cmd(b"SET", b"k", b"v") + cmd(b"GET", b"k") + cmd(b"PING") + \
    cmd(b"XADD", b"s", b"1-1", b"f", b"v") + cmd(b"XADD", b"s", b"1-2", b"f", b"v")
PIPELINE_REPLY = b"+OK\r\n$1\r\nv\r\n+PONG\r\n$3\r\n1-1\r\n$3\r\n1-2\r\n"


def test_a_whole_pipeline_in_one_read() -> None:
    assert feed(session(), PIPELINE) == (PIPELINE_REPLY, False)


def test_byte_at_a_time_gives_the_same_replies() -> None:
    s = session()
    got = b""
    for i in range(len(PIPELINE)):
        out, close = feed(s, PIPELINE[i:i + 1])
        assert not close
        got += out
    assert got == PIPELINE_REPLY


def test_inline_commands() -> None:
    assert feed(session(), b"PING\r\nECHO hi\r\n") == (b"+PONG\r\n$2\r\nhi\r\n", False)


def test_runs_of_xadd_star_answer_one_id_each() -> None:
    s = session()
    out, _ = feed(s, cmd(b"XADD", b"s", b"*", b"f", b"v") * 5 + cmd(b"XLEN", b"s"))
    ids = out.split(b"\r\n")[1:10:2]
    assert len(set(ids)) == 5 and all(b"-" in i for i in ids) and out.endswith(b":5\r\n")


def test_client_reply_off_and_on() -> None:
    s = session()
    out, _ = feed(s, cmd(b"CLIENT", b"REPLY", b"OFF") + cmd(b"SET", b"a", b"1") +
                  cmd(b"GET", b"a") + cmd(b"CLIENT", b"REPLY", b"ON") + cmd(b"GET", b"a"))
    assert out == b"+OK\r\n$1\r\n1\r\n"


def test_client_reply_skip_drops_the_next_reply_only() -> None:
    s = session()
    out, _ = feed(s, cmd(b"CLIENT", b"REPLY", b"SKIP") + cmd(b"PING") + cmd(b"ECHO", b"x"))
    assert out == b"$1\r\nx\r\n"


def test_skip_inside_a_run_drops_one_of_its_replies() -> None:
    s = session()
    out, _ = feed(s, cmd(b"CLIENT", b"REPLY", b"SKIP") +
                  cmd(b"XADD", b"s", b"1-1", b"f", b"v") + cmd(b"XADD", b"s", b"1-2", b"f", b"v"))
    assert out == b"$3\r\n1-2\r\n"


def test_hello_3_mid_pipeline_switches_the_replies_after_it() -> None:
    s = session()
    out, _ = feed(s, cmd(b"HSET", b"h", b"f", b"v") + cmd(b"HGETALL", b"h") +
                  cmd(b"HELLO", b"3") + cmd(b"HGETALL", b"h"))
    assert out.startswith(b":1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n%7\r\n")  # RESP2, then HELLO's map
    assert out.endswith(b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n")  # RESP3 after it
    assert s.client.protocol == 3


def test_protocol_error_closes_after_the_replies_before_it() -> None:
    s = session()
    out, close = feed(s, cmd(b"PING") + b"*1\r\n$x\r\n")
    assert out == b"+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"
    assert close and s.failed
    assert feed(s, cmd(b"PING")) == (b"", False)  # nothing more runs


def test_protocol_error_found_while_feeding() -> None:
    s = session()
    out, close = feed(s, b'ECHO "x\r\n')
    assert (out, close) == (b"-ERR Protocol error: unbalanced quotes in request\r\n", True)


def test_quit_closes_after_its_reply() -> None:
    s = session()
    assert feed(s, cmd(b"PING") + cmd(b"QUIT") + cmd(b"PING")) == (b"+PONG\r\n+OK\r\n", True)


def test_cross_protocol_post_aborts_and_drops_the_replies() -> None:
    s = session()
    out, close = feed(s, cmd(b"PING") + b"POST / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert s.aborted and out == b"" and not close


def test_busy_mode_refuses_with_redis_busy_text() -> None:
    s = session()
    s.receive(cmd(b"GET", b"k") + cmd(b"PING") + cmd(b"SCRIPT", b"KILL"))
    s.run_busy()
    out, close = s.drain()
    busy = b"-" + errors.BUSY + b"\r\n"
    assert out == busy + busy + b"-" + errors.NOTBUSY + b"\r\n"
    assert not close


def test_busy_mode_serves_allowed_commands_and_aborts_cross_protocol() -> None:
    s = session()
    s.receive(cmd(b"HELLO", b"3") + cmd(b"SET", b"a", b"b"))
    s.run_busy()
    out, _ = s.drain()
    assert out.startswith(b"%7\r\n") and out.endswith(b"-" + errors.BUSY + b"\r\n")
    s.receive(b"POST / HTTP/1.1\r\n")
    s.run_busy()
    assert s.aborted and s.drain() == (b"", False)


def test_deliver_a_late_reply_in_order() -> None:
    engine = Engine(Config())
    reader, writer = session(engine), session(engine)
    out, _ = feed(reader, cmd(b"PING") + cmd(b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$") +
                  cmd(b"XLEN", b"s"))
    assert out == b"+PONG\r\n"  # the XLEN behind the blocked XREAD waits
    assert reader.waiting
    delivered: list[object] = []
    reader.client.send = delivered.append
    feed(writer, cmd(b"XADD", b"s", b"1-1", b"f", b"v"))
    assert len(delivered) == 1
    assert not reader.take(delivered[0])
    reader.deliver(delivered[0])
    reader.run()  # then what waited behind it
    out, close = reader.drain()
    assert out == b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n" \
        b":1\r\n"
    assert not close and not reader.waiting


def test_a_reply_sent_while_commands_run_keeps_its_place() -> None:
    s = session()
    feed(s, cmd(b"CLIENT", b"REPLY", b"OFF"))
    assert s.take(b"late")  # dropped under CLIENT REPLY OFF
    assert s.drain() == (b"", False)
