"""The operator's commands against redis-server: MONITOR lines, SLOWLOG,
LATENCY, CLIENT REPLY / PAUSE, CONFIG REWRITE and MEMORY replies.

Times, addresses and durations vary: they are masked before comparing."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential

_LINE_HEAD = re.compile(rb"^\+\d+\.\d{6} \[(\d+) ([^\]]+)\] ")


def _monitor_lines(port: int, corpus: list[list[bytes | str]]) -> list[bytes]:
    """What a monitor sees while another client runs ``corpus`` (then
    ECHO END); each line's time masked and its address checked and masked."""
    watcher, worker = RawClient(port), RawClient(port)
    try:
        assert watcher.call("MONITOR") == b"+OK\r\n"
        addr = re.search(rb"addr=(\S+)", worker.call("CLIENT", "INFO")).group(1)
        for argv in corpus:
            worker.call(*argv)
        worker.call("ECHO", "END")
        lines = []
        while True:
            line = watcher.read_reply(timeout=5)
            head = _LINE_HEAD.match(line)
            assert head is not None, line
            if head.group(2) != b"lua":
                assert head.group(2) == addr, line
            masked = _LINE_HEAD.sub(rb"+<time> [\1 <addr>] ", line)
            lines.append(masked)
            if masked.endswith(b'"ECHO" "END"\r\n'):
                return lines
    finally:
        watcher.close()
        worker.close()


MONITOR_CORPUS: list[list[bytes | str]] = [
    ["SET", "k", b"a\nb\"\\\x01\x7f\xff\t\r\x07\x08 z"],
    ["get", "k"],
    ["SELECT", "3"],
    ["AUTH", "default", "secret"],
    ["AUTH", "secret"],
    ["HELLO", "2", "AUTH", "default", "secret"],
    ["HELLO", "2", "SETNAME", "me"],
    ["MULTI"], ["set", "x", "1"], ["incr", "x"], ["EXEC"],
    ["MULTI"], ["nosuch"], ["EXEC"],
    ["MULTI"], ["PING"], ["DISCARD"],
    ["CONFIG", "GET", "hz"],          # admin commands are not shown
    ["CLIENT", "LIST"], ["CLIENT", "ID"],
    ["ping", "a", "b"],               # an arity error is not shown
    ["lpush"], ["lpush", "l", "1"], ["lpush", "k", "x"],  # a WRONGTYPE one is
    ["BLPOP", "nothing", "0.01"],
    ["XADD", "s", "1-1", "f", "v"], ["XADD", "s", "2-1", "f", "v"],
    ["SELECT", "0"],
    ["INFO", "server"],
]


def _ports(differ) -> tuple[int, int]:
    return differ.ours.sock.getpeername()[1], differ.theirs.sock.getpeername()[1]


def test_monitor_lines(differ):
    ours_port, theirs_port = _ports(differ)
    ours = _monitor_lines(ours_port, MONITOR_CORPUS)
    theirs = _monitor_lines(theirs_port, MONITOR_CORPUS)
    assert ours == theirs
    assert ours[1] == b'+<time> [0 <addr>] "SET" "k" "a\\nb\\"\\\\\\x01\\x7f\\xff\\t\\r\\a\\b z"\r\n'


def _monitor_session(port: int) -> list[bytes]:
    c = RawClient(port)
    try:
        out = [c.call("MONITOR"), c.call("GET", "k"), c.call("PUBLISH", "ch", "m")]
        c.send_raw(b"*1\r\n$7\r\nMONITOR\r\n*1\r\n$4\r\nPING\r\n")  # MONITOR again: no reply
        out += [c.read_reply(timeout=5), _LINE_HEAD.sub(b"+<time> ", c.read_reply(timeout=5))]
        out += [c.call("RESET"), c.call("GET", "k"), c.call("MULTI"), c.call("MONITOR"),
                c.call("EXEC")]
        c.call("MONITOR")
        c.send_raw(b"*1\r\n$4\r\nQUIT\r\n")
        out.append(c.read_until_closed())
        return out
    finally:
        c.close()


def test_monitor_client_commands(differ):
    """A monitor may not touch the keyspace, sees its own commands after
    their replies, leaves monitor mode with RESET, and MONITOR in MULTI fails."""
    ours_port, theirs_port = _ports(differ)
    ours = _monitor_session(ours_port)
    assert ours == _monitor_session(theirs_port)
    assert ours[1] == b"-ERR Replica can't interact with the keyspace\r\n"


# -- SLOWLOG -------------------------------------------------------------------------
def _mask_slowlog(differ) -> None:
    """Ids, times, durations and client ports vary: masked."""
    differ.normalise(rb"\*6\r\n:\d+\r\n:\d+\r\n:\d+\r\n", b"*6\r\n:ID\r\n:T\r\n:US\r\n")
    differ.normalise(rb"\$\d+\r\n127\.0\.0\.1:\d+\r\n", b"$A\r\n127.0.0.1:P\r\n")


def test_slowlog_entries(differ):
    _mask_slowlog(differ)
    differ.check("CONFIG", "SET", "slowlog-log-slower-than", "0")
    differ.check("CONFIG", "SET", "slowlog-max-len", "128")
    differ.check("SLOWLOG", "RESET")
    differ.check("SET", "k", "v")
    differ.check("CLIENT", "SETNAME", "operator")
    differ.check("AUTH", "default", "secret")  # redacted
    differ.check("RPUSH", "many", *[str(i) for i in range(40)])   # 32 arguments at most
    differ.check("RPUSH", "many", *[str(i) for i in range(30)])   # 32 exactly: kept whole
    differ.check("SET", "big", "x" * 300)                         # 128 bytes each at most
    differ.check("SET", "edge", "y" * 128)
    differ.check("MULTI")
    differ.check("INCR", "n")
    differ.check("EXEC")                                          # EXEC itself is not logged
    differ.check("SLOWLOG", "LEN")
    reply = differ.check("SLOWLOG", "GET", "-1")
    assert b"... (11 more arguments)" in reply and b"... (172 more bytes)" in reply
    assert b"(redacted)" in reply and b"$8\r\noperator\r\n" in reply
    differ.check("SLOWLOG", "GET", "2")
    differ.check("SLOWLOG", "GET", "0")
    differ.check("SLOWLOG", "GET")
    differ.check("CONFIG", "SET", "slowlog-max-len", "3")
    differ.check("SLOWLOG", "LEN")
    differ.check("SLOWLOG", "GET", "-1")
    differ.check("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    differ.check("SLOWLOG", "RESET")
    differ.check("SET", "k", "v")
    differ.check("SLOWLOG", "LEN")
    differ.check("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    differ.check("CONFIG", "SET", "slowlog-max-len", "128")


def test_slowlog_redacts_migrate_and_sensitive_config(differ):
    """MIGRATE's AUTH password and AUTH2 user and password, and CONFIG SET's
    sensitive values, are logged as "(redacted)" (Redis's slowlog.tcl "Some
    commands can redact sensitive fields")."""
    _mask_slowlog(differ)
    differ.normalise(rb"-IOERR[^\r]*\r\n", b"-IOERR\r\n")
    differ.check("CONFIG", "SET", "slowlog-log-slower-than", "0")
    differ.check("SLOWLOG", "RESET")
    try:
        differ.check("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH2", "u", "p")
        differ.check("MIGRATE", "127.0.0.1", "1", "", "0", "10", "COPY", "AUTH", "pw",
                     "KEYS", "a", "b")
        differ.check("CONFIG", "SET", "masterauth", "x")
        differ.check("CONFIG", "SET", "maxmemory", "0", "masteruser", "u")
        differ.check("CONFIG", "SET", "requirepass", "")
        reply = differ.check("SLOWLOG", "GET", "-1")
        assert reply.count(b"(redacted)") == 6 and b"$2\r\npw\r\n" not in reply
    finally:
        differ.check("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        differ.check("CONFIG", "SET", "masterauth", "", "masteruser", "")
        differ.check("SLOWLOG", "RESET")


def test_slowlog_errors_and_help(differ):
    for argv in (["SLOWLOG", "GET", "-2"], ["SLOWLOG", "GET", "x"], ["SLOWLOG", "GET", "1", "2"],
                 ["SLOWLOG", "LEN", "x"], ["SLOWLOG", "RESET", "1"], ["SLOWLOG", "FOO"],
                 ["SLOWLOG"], ["SLOWLOG", "HELP"], ["SLOWLOG", "HELP", "x"],
                 ["CONFIG", "SET", "slowlog-max-len", "-1"],
                 ["CONFIG", "SET", "slowlog-log-slower-than", "-2"],
                 ["CONFIG", "GET", "slowlog-max-len"],
                 ["CONFIG", "GET", "slowlog-log-slower-than"]):
        differ.check(*argv)


# -- LATENCY -------------------------------------------------------------------------
def test_latency_after_reset(differ):
    differ.check("LATENCY", "RESET")
    for argv in (["LATENCY", "LATEST"], ["LATENCY", "HISTORY", "command"],
                 ["LATENCY", "RESET", "command", "fast-command"], ["LATENCY", "GRAPH", "command"],
                 ["LATENCY", "DOCTOR"], ["LATENCY", "HELP"], ["LATENCY", "FOO"],
                 ["LATENCY", "HISTORY"], ["LATENCY", "LATEST", "x"],
                 ["CONFIG", "GET", "latency-tracking"],
                 ["CONFIG", "GET", "latency-monitor-threshold"],
                 ["CONFIG", "SET", "latency-monitor-threshold", "-1"],
                 ["CONFIG", "SET", "latency-tracking-info-percentiles", "abc"],
                 ["CONFIG", "SET", "latency-tracking-info-percentiles", "101"],
                 ["CONFIG", "SET", "latency-tracking-info-percentiles", "50.0 1e1 99.90"],
                 ["CONFIG", "GET", "latency-tracking-info-percentiles"],
                 ["CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9"],
                 ["CONFIG", "SET", "latency-monitor-threshold", "100"],
                 ["LATENCY", "DOCTOR"],
                 ["CONFIG", "SET", "latency-monitor-threshold", "0"]):
        differ.check(*argv)


def test_latency_histogram_shape(differ):
    """After CONFIG RESETSTAT, the calls and the bucket labels' form match;
    the buckets themselves depend on speed, so only their shape is compared."""
    differ.normalise(rb"(histogram_usec\r\n%)\d+\r\n(?::\d+\r\n:\d+\r\n)+", rb"\1N\r\n<buckets>")
    differ.normalise(rb"(histogram_usec\r\n%)\d+\r\n(?::\d+\r\n:\d+\r\n)+", rb"\1N\r\n<buckets>")
    differ.check("CONFIG", "RESETSTAT")
    for _ in range(3):
        differ.check("SET", "k", "v")
    differ.check("GET", "k")
    differ.resp3()
    differ.check("LATENCY", "HISTOGRAM", "set", "GET", "nosuch", "set")
    differ.check("LATENCY", "HISTOGRAM", "nosuch")


def _latencystats(client) -> list[bytes]:
    """INFO latencystats' lines with the values masked, sorted (Redis lists
    the commands in its hash table's order)."""
    text = client.call("INFO", "latencystats").split(b"\r\n", 1)[1]
    return sorted(re.sub(rb"=\d+\.\d{3}", b"=X", text).split(b"\r\n"))


def test_info_latencystats_lines(differ):
    differ.check("CONFIG", "RESETSTAT")
    differ.check("SET", "k", "v")
    differ.check("CLIENT", "GETNAME")
    assert _latencystats(differ.ours) == _latencystats(differ.theirs)
    differ.check("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.99")
    lines = _latencystats(differ.ours)
    assert lines == _latencystats(differ.theirs)
    assert b"latency_percentiles_usec_client|getname:p50=X,p99.99=X" in lines
    differ.check("CONFIG", "SET", "latency-tracking", "no")
    differ.check("INFO", "latencystats")
    differ.check("CONFIG", "SET", "latency-tracking", "yes")
    differ.check("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")


# -- CLIENT REPLY, CLIENT PAUSE, CLIENT KILL MAXAGE -----------------------------------------
def _reply_traffic(client: RawClient) -> list[bytes]:
    """Everything a client gets back for a pipeline under CLIENT REPLY OFF /
    SKIP / ON (ending with a PING whose reply marks the end)."""
    from tests.support.rawclient import encode_command
    commands = [["CLIENT", "REPLY", "OFF"], ["PING"], ["SET", "x", "1"], ["CLIENT", "REPLY", "SKIP"],
                ["ECHO", "a"], ["CLIENT", "REPLY", "ON"], ["ECHO", "b"],
                ["CLIENT", "REPLY", "SKIP"], ["ECHO", "skipped"], ["ECHO", "c"],
                ["CLIENT", "REPLY", "SKIP"], ["INCR", "x"], ["GET", "x"],
                ["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "SKIP"], ["ECHO", "d"],
                ["ECHO", "e"], ["PING", "end"]]
    client.send_raw(b"".join(encode_command(c) for c in commands))
    got = []
    while not got or got[-1] != b"$3\r\nend\r\n":
        got.append(client.read_reply(timeout=5))
    return got


def test_client_reply_traffic(differ):
    ours = _reply_traffic(differ.ours)
    assert ours == _reply_traffic(differ.theirs)
    assert ours == [b"+OK\r\n", b"$1\r\nb\r\n", b"$1\r\nc\r\n", b"$1\r\n2\r\n",
                    b"$1\r\ne\r\n", b"$3\r\nend\r\n"]


def test_client_reply_pipelined_runs(differ):
    """Replies dropped inside a pipelined run of XADDs (one engine call)."""
    from tests.support.rawclient import encode_command
    for client in (differ.ours, differ.theirs):
        burst = [["CLIENT", "REPLY", "SKIP"]] + \
            [["XADD", "s", f"{i}-1", "f", "v"] for i in range(1, 6)] + [["XLEN", "s"]]
        client.send_raw(b"".join(encode_command(c) for c in burst))
    ours = [differ.ours.read_reply(timeout=5) for _ in range(5)]
    assert ours == [differ.theirs.read_reply(timeout=5) for _ in range(5)]
    assert ours[0] == b"$3\r\n2-1\r\n" and ours[-1] == b":5\r\n"


def test_client_pause_reply_errors(differ):
    for argv in (["CLIENT", "PAUSE", "x"], ["CLIENT", "PAUSE", "-1"], ["CLIENT", "PAUSE", "10", "foo"],
                 ["CLIENT", "PAUSE", "10", "write", "extra"], ["CLIENT", "UNPAUSE", "x"],
                 ["CLIENT", "REPLY"], ["CLIENT", "REPLY", "foo"], ["CLIENT", "REPLY", "on", "x"],
                 ["CLIENT", "PAUSE", "0", "WRITE"], ["CLIENT", "UNPAUSE"], ["CLIENT", "UNPAUSE"],
                 ["CLIENT", "KILL", "MAXAGE"]):
        differ.check(*argv)


def test_client_kill_maxage(differ):
    """CLIENT KILL MAXAGE (Redis 7.4, https://redis.io/docs/latest/commands/client-kill/):
    7.0 knows no such filter."""
    differ.check_newer("CLIENT", "KILL", "MAXAGE", "100000", ours=b":0\r\n")
    differ.check("CLIENT", "KILL", "MAXAGE", "x")


# -- MEMORY --------------------------------------------------------------------------
def _memory_stats_shape(client: RawClient) -> bytes:
    reply = client.call("MEMORY", "STATS")
    reply = re.sub(rb":\d+\r\n", b":N\r\n", reply)
    return re.sub(rb"\$\d+\r\n-?[\d.e+-]+\r\n", b"$D\r\n", reply)  # doubles (RESP2 bulk)


def test_memory_stats_fields(differ):
    """Redis 7.0's field list, in its order, a db.N map per database with keys."""
    for argv in (["SET", "a", "1"], ["SET", "b", "2", "EX", "100"], ["SELECT", "3"],
                 ["SET", "c", "3"], ["SELECT", "0"]):
        differ.check(*argv)
    ours = _memory_stats_shape(differ.ours)
    assert ours == _memory_stats_shape(differ.theirs)
    assert b"db.0" in ours and b"db.3" in ours and b"db.1\r\n" not in ours
    for argv in (["MEMORY", "STATS", "x"], ["MEMORY", "DOCTOR", "x"], ["MEMORY", "PURGE"],
                 ["MEMORY", "HELP"], ["MEMORY", "MALLOC-STATS", "x"], ["MEMORY", "NOPE"]):
        differ.check(*argv)


def test_memory_doctor_texts(differ):
    """A small instance gets Redis's "empty" text; ours may be past it (the
    interpreter grows), then it is the no-issue text: both Redis's words."""
    texts = {b"Hi Sam, this instance is empty or is using very little memory",
             b"Hi Sam, I can't find any memory issue in your instance."}
    theirs = differ.theirs.call("MEMORY", "DOCTOR")
    ours = differ.ours.call("MEMORY", "DOCTOR")
    assert any(t in theirs for t in texts) and any(t in ours for t in texts)


# -- CONFIG REWRITE ------------------------------------------------------------------
CONFIG_FILE = """# A comment at the top
hz 10
  # an indented comment

timeout 0
slowlog-max-len 128
latency-tracking-info-percentiles 50 99 99.9
slowlog-log-slower-than 10000
# slowlog-max-len 5
hz 12
dbfilename dump.rdb
"""

CONFIG_EDITS = [("hz", "20"), ("timeout", "5"), ("slowlog-max-len", "64"),
                ("latency-monitor-threshold", "7"), ("slowlog-log-slower-than", "10000")]


def _rewritten(port: int, path) -> list[str]:
    with RawClient(port) as client:
        for name, value in CONFIG_EDITS:
            assert client.call("CONFIG", "SET", name, value) == b"+OK\r\n"
        assert client.call("CONFIG", "REWRITE") == b"+OK\r\n"
    return path.read_text().split("\n")


def test_config_rewrite_file(tmp_path, processes):
    """The same file, the same edits: the same lines up to Redis's
    "# Generated by CONFIG REWRITE", and the new option among those after it
    (Redis appends in its hash table's order, and its own start-up options)."""
    from tests.support.processes import REDIS_SERVER, free_port, wait_for_port
    from tidelog.config import Config
    from tidelog.server.embed import EmbeddedServer

    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    theirs_path, ours_path = tmp_path / "redis.conf", tmp_path / "tidelog.conf"
    theirs_path.write_text(CONFIG_FILE)
    ours_path.write_text(CONFIG_FILE)
    port = free_port()
    processes.popen([REDIS_SERVER, str(theirs_path), "--port", str(port), "--bind", "127.0.0.1",
                     "--save", "", "--dir", str(tmp_path)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port)
    theirs = _rewritten(port, theirs_path)

    config = Config()
    config.load_text(CONFIG_FILE)
    config.config_file = str(ours_path)
    config.set("save", "", at_startup=True)
    config.set("dir", str(tmp_path), at_startup=True)
    srv = EmbeddedServer(config=config).start()
    try:
        ours = _rewritten(srv.port, ours_path)
    finally:
        srv.stop()
    cut = theirs.index("# Generated by CONFIG REWRITE")
    assert ours[:cut + 1] == theirs[:cut + 1]
    assert ours[2] == "# an indented comment" and ours[9] == ""  # "hz 12": blanked
    assert 'dbfilename "dump.rdb"' in ours  # string options quoted, as Redis writes them
    for line in ("latency-monitor-threshold 7", 'save ""', f'dir "{tmp_path}"'):
        assert line in ours[cut:] and line in theirs[cut:]


# -- COMMAND GETKEYS for XREAD / XREADGROUP --------------------------------------------
XREAD_FORMS = [
    ["XREAD", "STREAMS", "a", "b", "0", "0"], ["XREAD", "COUNT", "2", "BLOCK", "0", "STREAMS", "a", "0"],
    ["XREAD", "STREAMS", "a"], ["XREAD", "STREAMS", "a", "b", "0"], ["XREAD", "COUNT", "1", "STREAMS"],
    ["XREAD", "STREAMS", "streams", "0"], ["XREAD", "COUNT", "1", "streams", "STREAMS", "a", "0"],
    ["XREAD", "streams", "a", "b", "c", "d", "e"], ["XREAD", "BLOCK", "x", "STREAMS", "k", "$"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"],
    ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "NOACK", "STREAMS", "k", ">"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS"],
    ["XREADGROUP", "GROUP", "streams", "c", "STREAMS", "a", ">"],
    ["XREADGROUP", "GROUP", "g", "streams", "x", "STREAMS", "a", ">"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">"],
]


@pytest.mark.parametrize("form", XREAD_FORMS, ids=lambda f: " ".join(f))
def test_getkeys_xread(differ, form):
    """redis-server finds these keys from the arguments (its key spec:
    the first STREAMS from a fixed position, then half of what follows)."""
    differ.check("COMMAND", "GETKEYS", *form)
    differ.check("COMMAND", "GETKEYSANDFLAGS", *form)


def test_reset_turns_replies_on(differ):
    from tests.support.rawclient import encode_command
    for client in (differ.ours, differ.theirs):
        client.send_raw(b"".join(encode_command(c) for c in (
            ["CLIENT", "REPLY", "OFF"], ["PING"], ["RESET"], ["PING", "x"])))
    ours = [differ.ours.read_reply(timeout=5) for _ in range(2)]
    assert ours == [differ.theirs.read_reply(timeout=5) for _ in range(2)]
    assert ours == [b"+RESET\r\n", b"$1\r\nx\r\n"]
