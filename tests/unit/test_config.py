"""Configuration: redis.conf syntax, units, value checks and their error
texts, ``CONFIG GET`` patterns, ``CONFIG SET`` atomicity and ``CONFIG
REWRITE`` -- all without sockets (commands run through ``Engine.execute``).

The error texts are Redis 7.0.15's; the differential tests check the
CONFIG ones against redis-server as well.
"""

from __future__ import annotations

import logging

import pytest

from tidelog.commands.server.config import rewrite_config_text
from tidelog.config import ALIASES, OPTIONS, Config, ConfigError, parse_memory
from tidelog.engine import Ctx, Engine
from tidelog.glob import glob_match
from tidelog.resp.replies import ErrorReply, Map
from tidelog.server.main import parse_command_line


# -- helpers --------------------------------------------------------------------------
@pytest.fixture
def engine():
    return Engine(Config())


@pytest.fixture
def run(engine):
    client = engine.new_client(addr="127.0.0.1:1", laddr="127.0.0.1:6379")

    def call(*argv: str):
        return engine.execute(client, [a.encode() for a in argv])

    return call


def config_get(run, *patterns: str) -> list[tuple[bytes, bytes]]:
    reply = run("CONFIG", "GET", *patterns)
    assert isinstance(reply, Map), reply
    return reply.items


def error(reply) -> bytes:
    assert isinstance(reply, ErrorReply), reply
    return reply.message


# -- defaults and typed values -----------------------------------------------------------
def test_defaults_match_redis():
    config = Config()
    assert config["port"] == 6379 and config["databases"] == 16 and config["hz"] == 10
    assert config["maxclients"] == 10000 and config["timeout"] == 0
    assert config["proto-max-bulk-len"] == 512 * 1024 * 1024
    assert config["client-query-buffer-limit"] == 1024**3
    assert config["stream-node-max-entries"] == 100 and config["stream-node-max-bytes"] == 4096
    assert config["protected-mode"] is True and config.show("protected-mode") == "yes"
    assert config.show("daemonize") == "no" and config["loglevel"] == "notice"


# -- units ------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [
    ("0", 0), ("100", 100), ("1b", 1), ("1k", 1000), ("1kb", 1024), ("1K", 1000),
    ("1KB", 1024), ("1kB", 1024), ("1m", 1000**2), ("1mb", 1024**2), ("1g", 1000**3),
    ("1gb", 1024**3), ("5GB", 5 * 1024**3), ("05", 5), ("", 0), ("kb", 0),
    ("9223372036854775807", 2**63 - 1),
    ("9223372036854775808", -(2**63)),      # wraps like memtoull's unsigned result
    ("99999999999999999999", -1),           # saturates at ULLONG_MAX, read signed
])
def test_memory_units(text, value):
    assert parse_memory(text) == value


@pytest.mark.parametrize("text", ["1x", "-1", "+5", " 5", "5 ", "1.5k", "5t", "1kk", "k1",
                                  "1e3", "\u0661"])
def test_memory_values_refused(text):
    with pytest.raises(ConfigError, match="^argument must be a memory value$"):
        parse_memory(text)


def test_memory_option_bounds():
    config = Config()
    config.set("stream-node-max-bytes", "1kb")
    assert config["stream-node-max-bytes"] == 1024 and config.show("stream-node-max-bytes") == "1024"
    with pytest.raises(ConfigError, match="^argument must be between 1048576 and "
                                          "9223372036854775807 inclusive$"):
        config.set("proto-max-bulk-len", "1k")
    with pytest.raises(ConfigError, match="^argument must be between 0 and 9223372036854775807"):
        config.set("stream-node-max-bytes", "9223372036854775808")


# -- integers, booleans, enums ----------------------------------------------------------------
@pytest.mark.parametrize("text", ["x", "", " 5", "5 ", "+5", "05", "1k", "1.0", "1_000",
                                  "\u0661", "-0", "9223372036854775808"])
def test_integers_are_canonical(text):
    with pytest.raises(ConfigError, match="^argument couldn't be parsed into an integer$"):
        Config().set("timeout", text)


def test_integer_bounds():
    config = Config()
    with pytest.raises(ConfigError, match="^argument must be between 0 and 2147483647 inclusive$"):
        config.set("timeout", "-1")
    with pytest.raises(ConfigError, match="^argument must be between 1 and 4294967295 inclusive$"):
        config.set("maxclients", "0")
    config.set("maxclients", "4294967295")
    assert config["maxclients"] == 4294967295
    config.set("timeout", "-0" if False else "0")
    assert config["timeout"] == 0


def test_hz_is_clamped_like_redis():
    config = Config()
    config.set("hz", "0")
    assert config["hz"] == 1
    config.set("hz", "100000")
    assert config["hz"] == 500
    with pytest.raises(ConfigError, match="between 0 and 2147483647"):
        config.set("hz", "-1")


def test_booleans_and_enums():
    config = Config()
    config.set("protected-mode", "NO")
    assert config["protected-mode"] is False
    with pytest.raises(ConfigError, match="^argument must be 'yes' or 'no'$"):
        config.set("protected-mode", "1")
    config.set("loglevel", "WARNING")
    assert config["loglevel"] == "warning"
    with pytest.raises(ConfigError, match="^argument\\(s\\) must be one of the following: "
                                          "debug, verbose, notice, warning, nothing$"):
        config.set("loglevel", "loud")


def test_unixsocketperm_is_octal():
    config = Config()
    config.set("unixsocketperm", "700", at_startup=True)
    assert config["unixsocketperm"] == 0o700 and config.show("unixsocketperm") == "700"
    with pytest.raises(ConfigError, match="^argument couldn't be parsed as an octal number$"):
        config.set("unixsocketperm", "999", at_startup=True)
    with pytest.raises(ConfigError, match="^argument must be between 0 and 777 inclusive$"):
        config.set("unixsocketperm", "1000", at_startup=True)


def test_immutable_options_refused_at_run_time_only():
    config = Config()
    with pytest.raises(ConfigError, match="^can't set immutable config$"):
        config.set("databases", "4")
    config.set("databases", "4", at_startup=True)
    assert config["databases"] == 4


# -- redis.conf files -----------------------------------------------------------------
def test_config_file_syntax():
    config = Config()
    config.load_text(
        "# a comment\n"
        "\n"
        "   # an indented comment\n"
        "PORT 7000\n"                       # names are case-insensitive
        "hz   20   \n"
        "bind 127.0.0.1 -::1\n"             # several words for bind
        'dir "/tmp/with space"\n'
        "logfile ''\n"
        "stream-node-max-bytes 8kb\n"
        "timeout 10\n"
        "timeout 20\n"                       # the last one wins
    )
    assert config["port"] == 7000 and config["hz"] == 20
    assert config["bind"] == "127.0.0.1 -::1" and config.show("bind") == "127.0.0.1 -::1"
    assert config["dir"] == "/tmp/with space" and config["logfile"] == ""
    assert config["stream-node-max-bytes"] == 8192 and config["timeout"] == 20


@pytest.mark.parametrize("text, line, why", [
    ("nope 1\n", 1, "Bad directive or wrong number of arguments"),
    ("port 1\nport\n", 2, "wrong number of arguments"),
    ("port 7788 7789\n", 1, "wrong number of arguments"),
    ("# c\nhz x\n", 2, "argument couldn't be parsed into an integer"),
    ('port "7788\n', 1, "Unbalanced quotes in configuration line"),
    ("loglevel loud\n", 1,
     "argument(s) must be one of the following: debug, verbose, notice, warning, nothing"),
    ("databases 0\n", 1, "argument must be between 1 and 2147483647 inclusive"),
    ("proto-max-bulk-len 1x\n", 1, "argument must be a memory value"),
])
def test_config_file_errors_read_like_redis(text, line, why):
    with pytest.raises(ConfigError) as info:
        Config().load_text(text)
    bad = text.splitlines()[line - 1]
    assert str(info.value) == (
        "\n*** FATAL CONFIG FILE ERROR (Redis 8.10.0) ***\n"
        f"Reading the configuration file, at line {line}\n>>> '{bad}'\n{why}")


def test_command_line_over_file(tmp_path):
    path = tmp_path / "t.conf"
    path.write_text("port 7001\nhz 30\n")
    config = parse_command_line([str(path), "--port", "7002", "--bind", "127.0.0.1", "::1"])
    assert config["port"] == 7002 and config["hz"] == 30
    assert config["bind"] == "127.0.0.1 ::1" and config.config_file == str(path)
    with pytest.raises(ConfigError, match="argument couldn't be parsed into an integer"):
        parse_command_line(["--port", "x"])


# -- CONFIG GET patterns ----------------------------------------------------------------
def test_config_get_exact_names_keep_the_case_given(run):
    assert config_get(run, "hz") == [(b"hz", b"10")]
    assert config_get(run, "HZ") == [(b"HZ", b"10")]
    assert config_get(run, "hz", "HZ", "hz") == [(b"hz", b"10")]
    assert config_get(run, "nope") == []


def test_config_get_globs(run):
    assert config_get(run, "stream-node-*") == [(b"stream-node-max-entries", b"100"),
                                                (b"stream-node-max-bytes", b"4096")]
    assert config_get(run, "STREAM-NODE-MAX-E*") == [(b"stream-node-max-entries", b"100")]
    assert config_get(run, "h?") == [(b"hz", b"10")]
    assert [n for n, _ in config_get(run, "[pd]*")] == [
        b"port", b"dir", b"databases", b"proto-max-bulk-len", b"daemonize", b"protected-mode",
        b"pidfile", b"dbfilename", b"proc-title-template", b"propagation-error-behavior",
        b"dynamic-hz", b"disable-thp"]
    assert [n for n, _ in config_get(run, "min-*")] == [
        b"min-replicas-to-write", b"min-replicas-max-lag", b"min-slaves-to-write",
        b"min-slaves-max-lag"]  # the old names too, as Redis 7+ answers a glob
    hidden = [name for name, option in OPTIONS.items() if option.hidden]
    assert hidden == ["key-load-delay"]  # answered by its exact name only
    assert len(config_get(run, "*")) == len(OPTIONS) - len(hidden) + len(ALIASES)
    assert config_get(run, "key-load-delay") == [(b"key-load-delay", b"0")]
    assert config_get(run, "hz", "h?") == [(b"hz", b"10")]  # each option once
    assert config_get(run, "x[") == []


@pytest.mark.parametrize("pattern, name, nocase, expected", [
    (b"*", b"anything", False, True),
    (b"a*c", b"abbbc", False, True),
    (b"a*c", b"abbbd", False, False),
    (b"a?c", b"abc", False, True),
    (b"a?c", b"ac", False, False),
    (b"[abc]x", b"bx", False, True),
    (b"[^abc]x", b"bx", False, False),
    (b"[a-c]x", b"Bx", True, True),
    (b"[a-c]x", b"Bx", False, False),
    (b"[c-a]x", b"bx", False, True),        # a backwards range is swapped
    (b"a\\*b", b"a*b", False, True),
    (b"a\\*b", b"axb", False, False),
    (b"a[\\]]b", b"a]b", False, True),
    (b"[a-]x", b"]", False, True),          # "a-]" is the range ]..a, and the class
    (b"[a-]x", b"x", False, True),          # goes on (x) to the end of the pattern
    (b"[a-]x", b"]x", False, False),
    (b"[", b"", False, False),
    (b"ab[", b"ab", False, False),
    (b"ab[", b"abc", False, False),
    (b"ab[^", b"abc", False, True),         # an unterminated negated class matches any byte
    (b"a\\", b"a\\", False, True),          # a trailing backslash is literal
    (b"HZ", b"hz", True, True),
    (b"*a*a*a*a*a*a*a*a*b", b"a" * 60, False, False),  # no exponential blowup
])
def test_glob_match(pattern, name, nocase, expected):
    assert glob_match(pattern, name, nocase=nocase) is expected


# -- CONFIG SET -----------------------------------------------------------------------
def test_config_set_is_all_or_nothing(run, engine):
    assert error(run("CONFIG", "SET", "hz", "20", "timeout", "x")) == (
        b"ERR CONFIG SET failed (possibly related to argument 'timeout') - "
        b"argument couldn't be parsed into an integer")
    assert engine.config["hz"] == 10
    assert error(run("CONFIG", "SET", "hz", "20", "nope", "1")) == (
        b"ERR Unknown option or number of arguments for CONFIG SET - 'nope'")
    assert error(run("CONFIG", "SET", "hz", "20", "HZ", "30")) == (
        b"ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter")
    assert error(run("CONFIG", "SET", "Databases", "2")) == (
        b"ERR CONFIG SET failed (possibly related to argument 'Databases') - "
        b"can't set immutable config")
    assert error(run("CONFIG", "SET", "TIMEOUT", "x")) == (
        b"ERR CONFIG SET failed (possibly related to argument 'timeout') - "
        b"argument couldn't be parsed into an integer")
    assert error(run("CONFIG", "SET", "hz", "1", "timeout")) == b"ERR syntax error"
    assert error(run("CONFIG", "SET", "dir", "/nonexistent/dir")) == (
        b"ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory")
    assert engine.config["hz"] == 10
    assert run("CONFIG", "SET", "hz", "20", "timeout", "5").text == b"OK"
    assert (engine.config["hz"], engine.config["timeout"]) == (20, 5)


def test_config_set_loglevel_takes_effect(run):
    logger = logging.getLogger("tidelog")
    saved = logger.level
    try:
        run("CONFIG", "SET", "loglevel", "warning")
        assert logger.level == logging.WARNING
        run("CONFIG", "SET", "loglevel", "debug")
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(saved)


# -- CONFIG REWRITE -----------------------------------------------------------------------
# Redis writes every ACL user (the default one too) at the end of the file.
DEFAULT_USER_LINE = "user default on nopass sanitize-payload ~* &* +@all\n"


def _ctx(engine: Engine) -> Ctx:
    client = engine.new_client()
    return Ctx.new(engine, client, [b"CONFIG", b"REWRITE"], None, False)


def test_rewrite_keeps_comments_and_order(engine):
    original = ("# header\nhz 15\n\n# net\nbind 127.0.0.1\ntimeout 1\ntimeout 2\n"
                "# trailing comment\n")
    engine.config.load_text(original)
    engine.config.set("hz", "40")
    engine.config.set("dir", "/tmp/a dir")
    text = rewrite_config_text(_ctx(engine), original)
    # the later "timeout" line is blanked, as Redis does
    assert text == ("# header\nhz 40\n\n# net\nbind 127.0.0.1\ntimeout 2\n\n# trailing comment\n"
                    "\n# Generated by CONFIG REWRITE\ndir \"/tmp/a dir\"\n" + DEFAULT_USER_LINE)
    reloaded = Config()
    reloaded.load_text(text)
    assert reloaded["hz"] == 40 and reloaded["dir"] == "/tmp/a dir" and reloaded["timeout"] == 2


def test_rewrite_writes_only_what_differs_from_defaults(engine):
    assert rewrite_config_text(_ctx(engine), "") == "# Generated by CONFIG REWRITE\n" + \
        DEFAULT_USER_LINE
    engine.config.set("stream-node-max-entries", "5")
    assert rewrite_config_text(_ctx(engine), "") == (
        "# Generated by CONFIG REWRITE\nstream-node-max-entries 5\n" + DEFAULT_USER_LINE)


def test_config_rewrite_command(tmp_path, engine, run):
    assert error(run("CONFIG", "REWRITE")) == b"ERR The server is running without a config file"
    path = tmp_path / "t.conf"
    path.write_text("hz 11\n")
    engine.config.config_file = str(path)
    run("CONFIG", "SET", "hz", "12")
    assert run("CONFIG", "REWRITE").text == b"OK"
    assert path.read_text() == "hz 12\n\n# Generated by CONFIG REWRITE\n" + DEFAULT_USER_LINE
    assert [p.name for p in tmp_path.iterdir()] == ["t.conf"]  # no temporary left behind


@pytest.mark.parametrize("original, kept", [
    # what redis-server 7.0.15 wrote for these files (before its appended lines)
    ("hz 10\nhz 12\n", "hz 12\n\n"),
    ("hz 10\nhz 12\ntimeout 0\n", "hz 12\n\ntimeout 0\n\n"),
    ("hz 10\ntimeout 0\n", "hz 10\ntimeout 0\n\n"),
    ("hz 10\ntimeout 0", "hz 10\ntimeout 0\n"),
    ("hz 10\ntimeout 0\n\n\n", "hz 10\ntimeout 0\n\n"),
    ("  # indented\n\thz 10  \n", "# indented\nhz 10\n\n"),
])
def test_rewrite_lines_as_redis(engine, original, kept):
    engine.config.load_text(original)
    engine.config.set("latency-monitor-threshold", "7")
    assert rewrite_config_text(_ctx(engine), original) == (
        kept + "# Generated by CONFIG REWRITE\nlatency-monitor-threshold 7\n" + DEFAULT_USER_LINE)
