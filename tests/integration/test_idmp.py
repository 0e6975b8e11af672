"""Idempotent production over real sockets, from redis-py's execute_command
(RESP2 and RESP3), with the server's real clock and cron.

Each test follows a redis.io page, cited in it:
  XADD:        https://redis.io/docs/latest/commands/xadd/
  XCFGSET:     https://redis.io/docs/latest/commands/xcfgset/
  XIDMPRECORD: https://redis.io/docs/latest/commands/xidmprecord/
  XINFO STREAM https://redis.io/docs/latest/commands/xinfo-stream/
  Idempotency: https://redis.io/docs/latest/develop/data-types/streams/idempotency/
"""

from __future__ import annotations

import time

import pytest
import redis

from tidelog import errors

pytestmark = pytest.mark.timeout(60)

IDMP_KEYS = ["idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
             "iids-duplicates"]


def message(error: bytes) -> str:
    """redis-py's ResponseError text: the error line without its ``ERR `` prefix."""
    return error.decode().removeprefix("ERR ")


def xinfo(client, key="s") -> dict:
    reply = client.execute_command("XINFO", "STREAM", key)
    if isinstance(reply, list):  # RESP2: a flat list
        reply = dict(zip(reply[0::2], reply[1::2]))
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in reply.items()}


@pytest.fixture
def defaults(tidelog):
    """Restore the server's IDMP defaults after a test that changes them."""
    yield
    for name in ("stream-idmp-duration", "stream-idmp-maxsize"):
        tidelog.call(lambda name=name: tidelog.engine.config.set(name, "100"))


def test_idempotency_page_example(r):
    # idempotency page, "Idempotency modes" and "Producer isolation".
    first = r.execute_command("XADD", "mystream", "IDMP", "producer-1", "iid-1", "*",
                              "field", "value")
    assert r.execute_command("XADD", "mystream", "IDMP", "producer-1", "iid-1", "*",
                             "field", "value") == first
    other = r.execute_command("XADD", "mystream", "IDMP", "producer-2", "iid-1", "*",
                              "field", "value")
    auto = r.execute_command("XADD", "mystream", "IDMPAUTO", "producer-2", "*", "field", "value")
    assert auto == r.execute_command("XADD", "mystream", "IDMPAUTO", "producer-2", "*",
                                     "field", "value")
    assert len({first, other, auto}) == 3
    assert r.xlen("mystream") == 3
    assert [xinfo(r, "mystream")[k] for k in IDMP_KEYS] == [100, 100, 2, 3, 3, 2]


def test_xinfo_stream_fields_in_resp3(r3):
    # xinfo-stream: the IDMP fields, also in RESP3's map.
    r3.execute_command("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    info = xinfo(r3)
    assert [info[k] for k in IDMP_KEYS] == [100, 100, 1, 1, 1, 0]
    assert list(info)[7:13] == IDMP_KEYS


def test_only_with_auto_id_and_other_errors(r):
    # xadd: "IDMP ... only valid with *"; Redis 8.6's texts.
    with pytest.raises(redis.ResponseError) as exc:
        r.execute_command("XADD", "s", "IDMP", "p", "i", "1-1", "f", "v")
    assert str(exc.value) == message(errors.IDMP_ONLY_WITH_AUTO_ID)
    with pytest.raises(redis.ResponseError) as exc:
        r.execute_command("XADD", "s", "IDMP", "p", "i", "IDMPAUTO", "q", "*", "f", "v")
    assert str(exc.value) == message(errors.IDMP_TWICE)
    with pytest.raises(redis.ResponseError) as exc:
        r.execute_command("XADD", "s", "IDMPAUTO", "", "*", "f", "v")
    assert str(exc.value) == message(errors.IDMPAUTO_EMPTY_PID)
    assert r.exists("s") == 0


def test_xcfgset_examples_and_clearing(r):
    # xcfgset "Examples", then "Calling XCFGSET clears all existing producer
    # IDMP maps" - when a value changes (idempotency page, "Persistence").
    r.execute_command("XADD", "mystream", "*", "field", "value")
    first = r.execute_command("XADD", "mystream", "IDMP", "p", "i", "*", "field", "value")
    assert r.execute_command("XCFGSET", "mystream", "IDMP-DURATION", "100") == b"OK"
    assert r.execute_command("XADD", "mystream", "IDMP", "p", "i", "*", "f", "v") == first
    for argv in (["IDMP-DURATION", "300"], ["IDMP-MAXSIZE", "1000"],
                 ["IDMP-DURATION", "600", "IDMP-MAXSIZE", "500"]):
        assert r.execute_command("XCFGSET", "mystream", *argv) == b"OK"
    info = xinfo(r, "mystream")
    assert [info[k] for k in IDMP_KEYS] == [600, 500, 0, 0, 1, 1]
    assert r.execute_command("XADD", "mystream", "IDMP", "p", "i", "*", "f", "v") != first
    for argv, error in (([], errors.XCFGSET_NO_PARAMETER),
                        (["IDMP-DURATION", "86401"], errors.XCFGSET_DURATION_RANGE),
                        (["IDMP-MAXSIZE", "0"], errors.XCFGSET_MAXSIZE_RANGE),
                        (["IDMP-MAXSIZE"], errors.SYNTAX)):
        with pytest.raises(redis.ResponseError) as exc:
            r.execute_command("XCFGSET", "mystream", *argv)
        assert str(exc.value) == message(error)
    with pytest.raises(redis.ResponseError) as exc:
        r.execute_command("XCFGSET", "nosuch", "IDMP-DURATION", "5")
    assert str(exc.value) == "no such key"


def test_iid_expires_after_duration_on_the_real_clock(r):
    # xcfgset: "When an idempotent ID expires, it can be reused for new messages."
    r.execute_command("XADD", "s", "*", "f", "v")
    r.execute_command("XCFGSET", "s", "IDMP-DURATION", "1")
    first = r.execute_command("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
    assert r.execute_command("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "v2") == first
    time.sleep(1.1)
    assert r.execute_command("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "v3") != first
    assert r.xlen("s") == 3


def test_cron_drops_idle_producers(r, tidelog, defaults):
    # idempotency page: "If a producer application crashes ... Redis will keep
    # each iid for IDMP-DURATION seconds, after which they will be discarded."
    r.config_set("stream-idmp-duration", 1)
    for n in range(20):
        r.execute_command("XADD", "s", "IDMP", f"producer-{n}", "req", "*", "f", "v")

    def tracked() -> int:
        return tidelog.call(lambda: tidelog.engine.dbs[0].data[b"s"].idmp.iids_tracked)

    assert tracked() == 20
    deadline = time.monotonic() + 10
    while tracked() and time.monotonic() < deadline:  # nothing touches the stream
        time.sleep(0.05)
    assert tracked() == 0


def test_xidmprecord(r):
    # xidmprecord: OK, idempotent for the same ID, errors otherwise.
    id = r.execute_command("XADD", "s", "*", "f", "v")
    assert r.execute_command("XIDMPRECORD", "s", "p", "i", id) == b"OK"
    assert r.execute_command("XIDMPRECORD", "s", "p", "i", id) == b"OK"
    assert r.execute_command("XADD", "s", "IDMP", "p", "i", "*", "f", "w") == id
    other = r.execute_command("XADD", "s", "*", "f", "v")
    for argv, error in ((["s", "p", "i", other], errors.XIDMPRECORD_CONFLICT),
                        (["s", "", "i", other], errors.XIDMPRECORD_EMPTY_PID),
                        (["s", "p", "", other], errors.XIDMPRECORD_EMPTY_IID),
                        (["s", "p", "j", "99-1"], errors.XIDMPRECORD_NO_ENTRY),
                        (["nosuch", "p", "j", other], errors.NO_SUCH_KEY)):
        with pytest.raises(redis.ResponseError) as exc:
            r.execute_command("XIDMPRECORD", *argv)
        assert str(exc.value) == message(error)


def test_config_get_and_set(r, defaults):
    # XCFGSET's defaults are the server's stream-idmp-* settings.
    assert r.config_get("stream-idmp-*") == {"stream-idmp-duration": "100",
                                             "stream-idmp-maxsize": "100"}
    assert r.config_set("stream-idmp-maxsize", 7)
    r.execute_command("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert xinfo(r)["idmp-maxsize"] == 7
    with pytest.raises(redis.ResponseError, match="must be between 1 and 86400"):
        r.config_set("stream-idmp-duration", 0)
