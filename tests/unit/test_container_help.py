"""A container's HELP text is on its spec in the command table (``help=``
of ``@command``), and its ``X HELP`` subcommand answers exactly those lines,
one status line each, through the engine.  No command module keeps a HELP
list of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.engine_harness import Harness
from tidelog.commands.replies import help_command
from tidelog.commands.table import COMMANDS
from tidelog.resp.replies import ErrorReply, SimpleString

COMMANDS_DIR = Path(__file__).resolve().parents[2] / "src" / "tidelog" / "commands"

# CLUSTER HELP answers "cluster support disabled" outside cluster mode, as
# Redis 7+ does (commands/server/cluster.py): its text is on its spec, but
# its own handler answers it (tests/unit/test_cluster_control.py).
WITH_HELP = sorted(name for name, spec in COMMANDS.items()
                   if "help" in spec.subcommands and name != "cluster")


def test_the_containers_with_help_are_the_expected_ones():
    assert WITH_HELP == ["acl", "client", "command", "config", "function", "hotkeys", "latency",
                         "memory", "module", "object", "pubsub", "script", "slowlog", "tidelog.stage",
                         "xgroup",
                         "xinfo"]
    # DEBUG dispatches its own subcommands, and CLUSTER answers only in cluster
    # mode: both have their text on their spec too.
    assert sorted(name for name, spec in COMMANDS.items() if spec.help) == \
        sorted([*WITH_HELP, "debug", "cluster"])


@pytest.mark.parametrize("name", [*WITH_HELP, "debug", "cluster"])
def test_the_help_lines_are_on_the_spec_in_redis_form(name):
    lines = COMMANDS[name].help
    assert lines[0] == f"{name.upper()} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[-2:] == ("HELP", "    Prints this help.")
    assert all(isinstance(line, str) and "\r" not in line and "\n" not in line for line in lines)


@pytest.mark.parametrize("name", [*WITH_HELP, "debug"])
def test_the_help_reply_is_the_spec_lines(name):
    h = Harness()
    expected = [SimpleString(line.encode()) for line in COMMANDS[name].help]
    assert h(name.upper(), "HELP") == expected
    assert h(name.lower(), "help") == expected


@pytest.mark.parametrize("name", WITH_HELP)
def test_the_help_subcommand_has_redis_metadata(name):
    sub = COMMANDS[name].subcommands["help"]
    assert sub.name == f"{name}|help"
    assert sub.arity == 2
    assert sub.flags == frozenset({"loading", "stale"})
    assert sub.complexity == "O(1)"
    assert sub.handler is not None
    assert (sub.handler.__doc__ or "").splitlines()[0] == f"{name.upper()} HELP"


def test_a_changed_spec_changes_the_reply():
    """The reply is read from the spec at each call, not from a copy."""
    h = Harness()
    spec = COMMANDS["xinfo"]
    saved = spec.help
    try:
        spec.help = ("XINFO <subcommand> ...", "HELP", "    Prints this help.")
        assert h("XINFO", "HELP") == [SimpleString(b"XINFO <subcommand> ..."), SimpleString(b"HELP"),
                                      SimpleString(b"    Prints this help.")]
    finally:
        spec.help = saved
    assert h("XINFO", "HELP")[0] == SimpleString(saved[0].encode())


def test_help_command_refuses_a_container_without_help_lines():
    with pytest.raises(ValueError, match="lolwut has no help lines"):
        help_command("lolwut", group="server", since="5.0.0", summary="x")
    assert "help" not in COMMANDS["lolwut"].subcommands  # left as it was


def test_cluster_help_is_refused_outside_cluster_mode():
    assert Harness()("CLUSTER", "HELP") == ErrorReply(b"ERR This instance has cluster support disabled")


def test_no_module_keeps_a_help_list_of_its_own():
    """Each text's last line occurs once per spec that has help lines: no
    second copy of a HELP text is left in a command module."""
    copies = sum(path.read_text().count('"    Prints this help."') for path in COMMANDS_DIR.rglob("*.py"))
    assert copies == len(WITH_HELP) + 2  # + DEBUG, CLUSTER
    assert not any("help_reply(" in path.read_text() for path in COMMANDS_DIR.rglob("*.py"))
