"""MODULE, CLUSTER without cluster mode, LOLWUT and DEBUG ERROR through the
engine (no sockets), and LOLWUT's drawing parts as pure functions.

Pages: https://redis.io/commands/module-list, https://redis.io/commands/module-load,
https://redis.io/commands/lolwut, https://redis.io/commands/cluster-info,
https://redis.io/commands/debug."""

from __future__ import annotations

import random

import pytest

from tests.support.engine_harness import Harness
from tidelog import REDIS_VERSION
from tidelog.commands.server.lolwut import Canvas, landscape, poem, schotter
from tidelog.commands.table import COMMANDS
from tidelog.config import Config, ConfigError
from tidelog.resp.replies import Verbatim


@pytest.fixture
def h():
    return Harness()


def test_module_list_is_empty_and_loads_are_refused(h):
    assert h.ok("MODULE", "LIST") == []
    for argv in (("MODULE", "LOAD", "/lib/x.so"), ("MODULE", "LOAD", "/x.so", "a", "b"),
                 ("MODULE", "LOADEX", "/x.so", "CONFIG", "n", "v", "ARGS", "a")):
        assert h.err(*argv) == b"ERR Error loading the extension. Tidelog does not load Redis modules"
    assert h.err("MODULE", "UNLOAD", "search") == (
        b"ERR Error unloading module: no such module with that name")
    assert h.err("MODULE", "UNLOAD") == b"ERR wrong number of arguments for 'module|unload' command"
    assert h.err("MODULE", "NOPE") == b"ERR unknown subcommand 'NOPE'. Try MODULE HELP."
    assert h.ok("MODULE", "HELP")[0].text == (
        b"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")


def test_loadmodule_in_a_config_file_is_fatal():
    with pytest.raises(ConfigError) as info:
        Config().load_text("port 7000\nloadmodule /usr/lib/redis/modules/x.so\n")
    assert str(info.value).endswith(
        ">>> 'loadmodule /usr/lib/redis/modules/x.so'\n"
        "loadmodule: Tidelog does not load Redis modules")


def test_every_cluster_subcommand_says_cluster_is_disabled(h):
    cluster = COMMANDS["cluster"]
    assert len(cluster.subcommands) == 29
    for name, spec in cluster.subcommands.items():
        argc = spec.arity if spec.arity > 0 else -spec.arity
        argv = ["CLUSTER", name] + ["1"] * (argc - 2)
        assert h.err(*argv) == b"ERR This instance has cluster support disabled", name
    assert h.err("CLUSTER", "KEYSLOT") == (
        b"ERR wrong number of arguments for 'cluster|keyslot' command")
    assert h.err("CLUSTER", "NOPE") == b"ERR unknown subcommand 'NOPE'. Try CLUSTER HELP."


def test_acl_rules_name_cluster_and_its_subcommands(h):
    h.ok("ACL", "SETUSER", "u", "+cluster")
    h.ok("ACL", "SETUSER", "v", "on", "nopass", "-@all", "+cluster|info")
    assert h.ok("ACL", "DRYRUN", "u", "CLUSTER", "NODES") == h.ok("ACL", "DRYRUN", "v", "CLUSTER", "INFO")
    assert h.ok("ACL", "DRYRUN", "v", "CLUSTER", "NODES") == (
        b"User v has no permissions to run the 'cluster|nodes' command")


def test_debug_error_replies_the_text(h):
    assert h.err("DEBUG", "ERROR", "WRONGTYPE made up") == b"WRONGTYPE made up"
    assert h.err("DEBUG", "ERROR", "a\r\nb\nc") == b"a  b c"
    assert h.err("DEBUG", "ERROR") == (
        b"ERR unknown subcommand or wrong number of arguments for 'ERROR'. Try DEBUG HELP.")


def test_lolwut_versions(h):
    other = h.ok("LOLWUT", "VERSION", "1")
    assert other == Verbatim(f"Redis ver. {REDIS_VERSION}\n".encode())
    assert h.ok("LOLWUT", "VERSION", "7", "whatever") == other
    assert h.ok("LOLWUT", "VERSION", "-1") == other
    five = h.ok("LOLWUT", "VERSION", "5", "10", "2", "2").text.decode()
    assert five.endswith(
        f"\n\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. {REDIS_VERSION}\n")
    six = h.ok("LOLWUT", "VERSION", "6", "5", "3").text.decode()
    assert six.endswith("\nDedicated to the 8 bit game developers of past and present.\n"
                        "Original 8 bit image from Plaguemon by hikikomori. "
                        f"Redis ver. {REDIS_VERSION}\n")
    assert six.count("\033[0m") == 15
    default = h.ok("LOLWUT").text.decode()  # an 8.x server shows piece 8
    assert default.endswith(f"Redis ver. {REDIS_VERSION}\n") and default.count("\n") == 8
    assert h.err("LOLWUT", "VERSION", "x") == b"ERR value is not an integer or out of range"
    assert h.err("LOLWUT", "VERSION", "5", "10", "x") == (
        b"ERR value is not an integer or out of range")


def test_canvas_lines_and_braille():
    c = Canvas(4, 4)
    c.line(0, 0, 3, 3)
    assert [c.get(i, i) for i in range(4)] == [1, 1, 1, 1] and sum(c.dots) == 4
    c.set(-1, 9)  # off the canvas: ignored
    assert c.braille() == "\u2811\u2884\n"  # dots 1,5 | dots 3,8


def test_schotter_and_landscape_sizes():
    rng = random.Random(7)
    art = schotter(20, 4, 3, rng)
    rows = art.splitlines()
    assert all(len(row) == 20 for row in rows)
    assert all(0x2800 <= ord(ch) <= 0x28FF for row in rows for ch in row)
    assert any(ch != "\u2800" for ch in art.replace("\n", ""))
    land = landscape(7, 4, rng).splitlines()
    assert len(land) == 4 and all(row.count(" \033[0m") == 7 for row in land)


def test_poem_lines_never_repeat_a_group():
    text = poem(random.Random(3))
    lines = text.split("\n\n")[0].splitlines()
    assert len(lines) == 6 and all(line == line.upper() for line in lines)


def test_huge_pictures_are_clipped_not_drawn_in_full():
    """Redis would draw an 800-million-dot canvas for VERSION 5 1000 1 200;
    the event loop must not wait for that here."""
    from tidelog.commands.server.lolwut import MAX_CELLS, MAX_DOTS
    rng = random.Random(5)
    art = schotter(1000, 1, 200, rng)
    assert sum(len(line) for line in art.splitlines()) * 8 <= MAX_DOTS + 2000 * 4
    assert all(len(line) == 1000 for line in art.splitlines())
    land = landscape(1000, 1000, rng).splitlines()
    assert len(land) == MAX_CELLS // 1000
