"""redis.conf files as Redis reads them, without a server: the word splitting
(Redis's sdssplitargs rules), include, old names, Redis 8's deprecated
directives, the directives Tidelog accepts without acting on them, the
command line's ``-`` (stdin), and the log line format.

Facts from Redis 8's config table (types, ranges, defaults, aliases) and its
stock redis.conf; the error texts were checked against redis-server 7.0.15
where 7.0 has the option (tests/differential/test_redis_conf_diff.py).
"""

from __future__ import annotations

import io
import logging
import os
import re
import socket
from pathlib import Path

import pytest

from tidelog import REDIS_VERSION
from tidelog.commands.server.config import rewrite_config_text
from tidelog.config import (
    ALIASES,
    DEPRECATED_DIRECTIVES,
    OPTIONS,
    Config,
    ConfigError,
    split_config_args,
)
from tidelog.engine import Ctx, Engine
from tidelog.resp.replies import OK
from tidelog.server import daemon
from tidelog.server.main import parse_command_line

REDIS8_CONF = Path(__file__).resolve().parents[1] / "integration" / "data" / "redis8-defaults.conf"


# -- word splitting --------------------------------------------------------------------
@pytest.mark.parametrize("line, words", [
    ("port 6379", ["port", "6379"]),
    ("  a \t b  ", ["a", "b"]),
    ('dir "/tmp/with space"', ["dir", "/tmp/with space"]),
    ('x "a\\"b"', ["x", 'a"b']),
    ('x "\\n\\r\\t\\b\\a\\\\"', ["x", "\n\r\t\b\a\\"]),
    ('x "\\x41\\x7a"', ["x", "Az"]),
    ('x "\\x4"', ["x", "x4"]),                # not two hex digits: a plain escape
    ('x "\\q"', ["x", "q"]),
    ("x 'a b'", ["x", "a b"]),
    ("x 'it\\'s'", ["x", "it's"]),
    ("x 'a\\nb'", ["x", "a\\nb"]),           # single quotes: no escapes but \'
    ('x ""', ["x", ""]),
    ("x ''", ["x", ""]),
    ('ab"cd"', ["abcd"]),                    # a quote inside a word opens quoting
    ('a"b c"', ["ab c"]),
    ("port 6379 # not a comment", ["port", "6379", "#", "not", "a", "comment"]),
])
def test_split_like_redis(line, words):
    assert split_config_args(line) == words


@pytest.mark.parametrize("line", ['"abc', "'abc", '"abc"d', "'abc'd", 'x "a\\"'])
def test_split_unbalanced(line):
    assert split_config_args(line) is None


def test_hex_escape_above_ascii_is_a_byte():
    word = split_config_args('"\\xff"')[0]
    assert word.encode("utf-8", "surrogateescape") == b"\xff"


def test_unbalanced_quotes_report_the_trimmed_line():
    with pytest.raises(ConfigError) as info:
        Config().load_text("port 1\n   requirepass 'abc   \n")
    assert str(info.value) == (
        f"\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\n"
        "Reading the configuration file, at line 2\n>>> 'requirepass 'abc'\n"
        "Unbalanced quotes in configuration line")


def test_lines_split_at_newline_only():
    config = Config()
    config.load_text("hz 20\r\n\r\n  # comment\r\ntimeout 7")  # CRLF trimmed, no final newline
    assert config["hz"] == 20 and config["timeout"] == 7


# -- Redis's and Debian's files ------------------------------------------------------------
def test_stock_redis8_file_loads_and_changes_nothing():
    config = Config()
    config.load_text(REDIS8_CONF.read_text())
    default = Config()
    changed = {n for n in OPTIONS if config.show(n) != default.show(n)}
    # Only where Redis's stock file is not at Redis's compiled-in default.
    assert changed == {"pidfile", "cluster-config-file", "dir", "bind"}, changed
    assert "tcp-backlog" not in config.no_effect_read          # applied by the listener
    assert "lazyfree-lazy-user-flush" in config.no_effect_read
    assert len(config.no_effect_read) == len(set(config.no_effect_read))


def test_debian_file_loads():
    path = Path("/etc/redis/redis.conf")
    if not path.exists():
        pytest.skip("Debian's redis-server package is not installed")
    config = Config()
    config.load_text(path.read_text())
    assert config["daemonize"] is True and config["pidfile"] == "/run/redis/redis-server.pid"
    assert config.show("oom-score-adj-values") == "0 200 800"
    assert config.show("proc-title-template") == "{title} {listen-addr} {server-mode}"


def test_every_redis_option_has_its_default():
    """A few of each type, as Redis 8's CONFIG GET shows them at start."""
    config = Config()
    shown = {
        "tcp-backlog": "511", "always-show-logo": "no", "activerehashing": "yes",
        "hll-sparse-max-bytes": "3000", "active-defrag-ignore-bytes": "104857600",
        "maxmemory-clients": "0", "oom-score-adj": "no", "oom-score-adj-values": "0 200 800",
        "shutdown-on-sigterm": "default", "repl-diskless-load": "disabled",
        "syslog-ident": "redis", "syslog-facility": "local0", "supervised": "no",
        "cluster-config-file": "nodes.conf", "cluster-node-timeout": "15000",
        "enable-debug-command": "no", "io-threads": "1", "lookahead": "16",
        "replica-full-sync-buffer-limit": "0", "tracking-table-max-keys": "1000000",
        "proc-title-template": "{title} {listen-addr} {server-mode}",
    }
    assert {name: config.show(name) for name in shown} == shown


# -- old names and deprecated directives ---------------------------------------------------
@pytest.mark.parametrize("old, new, value", [
    ("slaveof", "replicaof", "10.0.0.1 6380"),
    ("slave-read-only", "replica-read-only", "no"),
    ("slave-serve-stale-data", "replica-serve-stale-data", "no"),
    ("slave-priority", "replica-priority", "7"),
    ("min-slaves-to-write", "min-replicas-to-write", "2"),
    ("min-slaves-max-lag", "min-replicas-max-lag", "3"),
    ("repl-ping-slave-period", "repl-ping-replica-period", "4"),
    ("list-max-ziplist-size", "list-max-listpack-size", "-3"),
    ("hash-max-ziplist-entries", "hash-max-listpack-entries", "100"),
    ("hash-max-ziplist-value", "hash-max-listpack-value", "32"),
    ("zset-max-ziplist-entries", "zset-max-listpack-entries", "100"),
    ("zset-max-ziplist-value", "zset-max-listpack-value", "32"),
    ("lua-time-limit", "busy-reply-threshold", "100"),
    ("slave-lazy-flush", "replica-lazy-flush", "yes"),
    ("server_cpulist", "server-cpulist", "0-3"),
])
def test_old_names(old, new, value):
    config = Config()
    config.load_text(f"{old} {value}\n")
    assert ALIASES[old] == new and config.show(new) == value


@pytest.mark.parametrize("name", sorted(DEPRECATED_DIRECTIVES))
def test_deprecated_directives_are_read_and_ignored(name):
    config = Config()
    config.load_text(f"{name} 5\n")
    assert name not in OPTIONS and name in config.no_effect_read
    with pytest.raises(ConfigError, match="Bad directive or wrong number of arguments"):
        Config().load_text(f"{name} 5 6\n")


def test_unknown_directive_stays_fatal():
    with pytest.raises(ConfigError) as info:
        Config().load_text("port 6379\nno-such-thing yes\n")
    assert str(info.value) == (
        f"\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\n"
        "Reading the configuration file, at line 2\n>>> 'no-such-thing yes'\n"
        "Bad directive or wrong number of arguments")


# -- values: Redis's type checks ---------------------------------------------------------
@pytest.mark.parametrize("name, text, why", [
    ("tcp-backlog", "x", "argument couldn't be parsed into an integer"),
    ("tcp-backlog", "-1", "argument must be between 0 and 2147483647 inclusive"),
    ("activerehashing", "1", "argument must be 'yes' or 'no'"),
    ("hll-sparse-max-bytes", "3x", "argument must be a memory value"),
    ("maxmemory-clients", "x", "argument must be a memory or percent value"),
    ("maxmemory-clients", "101%", "percentage argument must be less or equal to 100"),
    ("repl-diskless-load", "sometimes",
     "argument(s) must be one of the following: disabled, on-empty-db, swapdb, flush-before-load"),
    ("supervised", "maybe", "argument(s) must be one of the following: upstart, systemd, auto, no"),
    ("oom-score-adj-values", "1 2", "wrong number of arguments"),
    ("oom-score-adj-values", "0 200 3000",
     "Invalid oom-score-adj-values, elements must be between -2000 and 2000."),
    ("shutdown-on-sigterm", "save nosave",
     "shutdown options SAVE and NOSAVE can't be used simultaneously"),
    ("shutdown-on-sigterm", "later",
     "argument(s) must be one of the following: default, save, nosave, now, force"),
    ("proc-title-template", "{nope}", "template format is invalid or contains unknown variables"),
    ("proc-title-template", "{server-mode}",
     "template format is invalid or contains unknown variables"),   # expands to nothing
    ("active-expire-effort", "11", "argument must be between 1 and 10 inclusive"),
    ("io-threads", "0", "argument must be between 1 and 128 inclusive"),
])
def test_values_refused_as_redis_refuses_them(name, text, why):
    with pytest.raises(ConfigError) as info:
        Config().load_text(f"{name} {text}\n")
    assert str(info.value).endswith("\n" + why)


@pytest.mark.parametrize("name, text, shown", [
    ("maxmemory-clients", "10%", "10%"),
    ("maxmemory-clients", "1mb", "1048576"),
    ("oom-score-adj", "relative", "yes"),       # Redis shows a value's first name
    ("oom-score-adj", "absolute", "absolute"),
    ("shutdown-on-sigterm", "now save", "save now"),
    ("shutdown-on-sigint", "DEFAULT", "default"),
    ("oom-score-adj-values", "-5 +6 7", "-5 6 7"),
    ("proc-title-template", '"{{x {title} {port}"', "{{x {title} {port}"),
    ("loglevel", "nothing", "nothing"),
    ("active-defrag-ignore-bytes", "1kb", "1024"),
])
def test_values_shown_as_redis_shows_them(name, text, shown):
    config = Config()
    config.load_text(f"{name} {text}\n")
    assert config.show(name) == shown


def test_config_set_follows_redis_mutability():
    engine = Engine(Config())
    client = engine.new_client(addr="127.0.0.1:1", laddr="127.0.0.1:6379")

    def call(*argv: str):
        return engine.execute(client, [a.encode() for a in argv])

    assert call("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes") is OK
    assert call("CONFIG", "GET", "lazyfree-lazy-user-flush").items == [
        (b"lazyfree-lazy-user-flush", b"yes")]
    assert call("CONFIG", "SET", "tcp-backlog", "10").message == (
        b"ERR CONFIG SET failed (possibly related to argument 'tcp-backlog') - "
        b"can't set immutable config")
    assert call("CONFIG", "SET", "hll-sparse-max-bytes", "x").message == (
        b"ERR CONFIG SET failed (possibly related to argument 'hll-sparse-max-bytes') - "
        b"argument must be a memory value")
    assert call("CONFIG", "GET", "slave-read-only").items == [(b"slave-read-only", b"yes")]


def test_rewrite_keeps_no_effect_values_and_renames_old_names():
    config = Config()
    config.load_text("slave-read-only no\nlazyfree-lazy-user-flush yes\n")
    engine = Engine(config)
    client = engine.new_client(addr="127.0.0.1:1", laddr="127.0.0.1:6379")
    ctx = Ctx.new(engine, client, [b"CONFIG", b"REWRITE"], None, False)
    text = rewrite_config_text(ctx, "slave-read-only no\nlazyfree-lazy-user-flush yes\n")
    assert text.splitlines()[:2] == ["replica-read-only no", "lazyfree-lazy-user-flush yes"]
    again = Config()
    again.load_text(text)
    assert again.show("replica-read-only") == "no"


# -- include --------------------------------------------------------------------------------
def test_include_nested_relative_to_cwd_and_globs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "10-a.conf").write_text("hz 11\ninclude inner.conf\n")
    (tmp_path / "conf.d" / "20-b.conf").write_text("timeout 22\n")
    (tmp_path / "inner.conf").write_text("tcp-keepalive 33\n")   # relative to cwd, as Redis
    main = tmp_path / "main.conf"
    main.write_text("hz 5\ninclude conf.d/*.conf\ninclude empty.d/*.conf\nmaxclients 44\n")
    config = parse_command_line([str(main), "--hz", "6"])
    assert (config["hz"], config["timeout"], config["tcp-keepalive"], config["maxclients"]) == (
        6, 22, 33, 44)


def test_include_error_names_the_included_line(tmp_path):
    inner = tmp_path / "inner.conf"
    inner.write_text("# one\nport nope\n")
    with pytest.raises(ConfigError) as info:
        Config().load_text(f"hz 5\ninclude {inner}\n")
    assert "at line 2\n>>> 'port nope'\nargument couldn't be parsed into an integer" in str(
        info.value)


def test_include_of_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        Config().load_text(f"include {tmp_path / 'nope.conf'}\n")


def test_include_loop_stops(tmp_path):
    loop = tmp_path / "loop.conf"
    loop.write_text(f"include {loop}\n")
    with pytest.raises(ConfigError, match="include nested too deeply"):
        Config().load_text(f"include {loop}\n")


# -- the command line -------------------------------------------------------------------------
def test_stdin_between_file_and_options(tmp_path):
    path = tmp_path / "a.conf"
    path.write_text("hz 5\ntimeout 1\n")
    config = parse_command_line([str(path), "-", "--timeout", "3"],
                                stdin=io.StringIO("timeout 2\ntcp-keepalive 9\n"))
    assert (config["hz"], config["timeout"], config["tcp-keepalive"]) == (5, 3, 9)
    assert config.config_file == str(path)
    config = parse_command_line(["--hz", "7", "-"], stdin=io.StringIO("hz 8\n"))
    assert config["hz"] == 7 and config.config_file is None


def test_option_and_value_in_one_argument():
    config = parse_command_line(["--port 7001", "--save", "900 1"])
    assert config["port"] == 7001 and config["save"] == "900 1"


def test_save_alone_on_the_command_line_means_no_save_points():
    assert parse_command_line(["--save", "--hz", "5"])["save"] == ""
    assert parse_command_line(["--hz", "5", "--save"])["save"] == ""


def test_no_effect_options_on_the_command_line_are_noted():
    config = parse_command_line(["--activerehashing", "no", "--hz", "5"])
    assert config.no_effect_read == ["activerehashing"]


# -- log lines ------------------------------------------------------------------------------
LINE = re.compile(r"^(\d+):([MSCX]) (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) (.) (.*)$")


@pytest.mark.parametrize("level, char", [
    (logging.DEBUG, "."), (15, "-"), (logging.INFO, "*"), (logging.WARNING, "#"),
    (logging.ERROR, "#"),
])
def test_log_line_format(level, char):
    record = logging.LogRecord("tidelog", level, __file__, 1, "hello %s", ("there",), None)
    daemon.set_role(lambda: "S")
    try:
        line = daemon.RedisFormatter().format(record)
    finally:
        daemon.set_role(lambda: "M")
    match = LINE.match(line)
    assert match, line
    assert match.group(2) == "S" and match.group(4) == char and match.group(5) == "hello there"


def test_log_line_in_a_forked_child_says_c(monkeypatch):
    monkeypatch.setattr(daemon, "_main_pid", -1)  # as in a child: another pid than the server's
    record = logging.LogRecord("tidelog", logging.INFO, __file__, 1, "saving", (), None)
    match = LINE.match(daemon.RedisFormatter().format(record))
    assert match and match.group(2) == "C" and match.group(4) == "*"


def test_loglevels_filter_as_redis():
    config = Config()
    logger = logging.getLogger("tidelog")
    saved = logger.handlers[:], logger.level
    try:
        for level, shown in (("verbose", {15, 20, 30}), ("notice", {20, 30}), ("warning", {30}),
                             ("nothing", set()), ("debug", {10, 15, 20, 30})):
            config.set("loglevel", level)
            daemon.setup_logging(config)
            assert {n for n in (10, 15, 20, 30) if logger.isEnabledFor(n)} == shown
    finally:
        logger.handlers[:], level = saved
        logger.setLevel(level)


def test_sentinel_and_loadmodule_lines():
    config = Config()
    config.load_text("sentinel\n")   # ignored outside sentinel mode, as Redis ignores it
    for line, why in (("sentinel monitor m 127.0.0.1 6379 2",
                       "sentinel directive while not in sentinel mode"),
                      ("loadmodule /usr/lib/redis/modules/x.so",
                       "loadmodule: Tidelog does not load Redis modules")):
        with pytest.raises(ConfigError) as info:
            Config().load_text(line + "\n")
        assert str(info.value).endswith(f">>> '{line}'\n{why}")


@pytest.mark.parametrize("mode, env, kind, warned", [
    ("no", {"NOTIFY_SOCKET": "/x", "UPSTART_JOB": "j"}, None, False),
    ("auto", {"NOTIFY_SOCKET": "/x"}, "systemd", False),
    ("auto", {"UPSTART_JOB": "j", "NOTIFY_SOCKET": "/x"}, "upstart", False),   # upstart first
    ("auto", {}, None, False),
    ("systemd", {}, None, True),
    ("systemd", {"NOTIFY_SOCKET": "@abstract"}, "systemd", False),
    ("upstart", {}, None, True),
    ("upstart", {"NOTIFY_SOCKET": "/x"}, None, True),
])
def test_supervision_detected_as_redis(monkeypatch, mode, env, kind, warned):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.delenv("UPSTART_JOB", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = Config()
    config.set("supervised", mode, at_startup=True)
    assert daemon.supervisor(config) == kind
    assert (daemon.supervision_warning(config) is not None) == warned


def test_notify_systemd_abstract_socket(monkeypatch):
    name = f"tidelog-notify-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(10)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        daemon.tell_ready("systemd", replica=True)
        assert sock.recv(4096) == (b"STATUS=Ready to accept connections in read-only mode. "
                                   b"Waiting for MASTER <-> REPLICA sync\n")
        assert sock.recv(4096) == b"READY=1\n"
        daemon.tell_stopping("systemd")
        assert sock.recv(4096) == b"STOPPING=1\n"
