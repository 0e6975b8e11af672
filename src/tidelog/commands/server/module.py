"""MODULE: Tidelog loads no Redis modules.

Redis modules are shared objects written against Redis's C module API; a
Python server cannot run them.  The MODULE container is still here so
clients and tools that ask (``MODULE LIST`` in a health check, a failed
``MODULE LOAD``) get Redis's reply shapes: an empty list, and the load error
with Redis's "Error loading the extension." prefix.
"""

from __future__ import annotations

from ...errors import MODULE_LOAD_REFUSED, MODULE_UNLOAD_NONE, CommandError
from ..contract import Ctx, Reply
from ..replies import help_command
from ..table import command


@command("module", arity=-2, group="server", since="4.0.0",
         complexity="Depends on subcommand.",
         summary="A container for module commands", container=True, help=(
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and "
    "optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
))
def module_(ctx: Ctx, argv: list[bytes]) -> Reply:
    """MODULE subcommand [argument ...]"""


help_command("module", group="server", since="5.0.0",
             summary="Show helpful text about the different subcommands")


@command("module|list", arity=2, flags="admin noscript", group="server", since="4.0.0",
         complexity="O(N) where N is the number of loaded modules.",
         summary="Return all loaded modules",
         tips=("nondeterministic_output_order",))
def module_list(ctx: Ctx, argv: list[bytes]) -> Reply:
    """MODULE LIST

    Cost: O(1): no module is ever loaded."""
    return []


@command("module|load", arity=-3, flags="admin noscript no_async_loading", group="server",
         since="4.0.0", complexity="O(1)", summary="Load a module")
def module_load(ctx: Ctx, argv: list[bytes]) -> Reply:
    """MODULE LOAD path [arg [arg ...]]

    Cost: O(1); always refused."""
    raise CommandError(MODULE_LOAD_REFUSED)


@command("module|loadex", arity=-3, flags="admin noscript no_async_loading", group="server",
         since="7.0.0", complexity="O(1)",
         summary="Load a module with extended parameters")
def module_loadex(ctx: Ctx, argv: list[bytes]) -> Reply:
    """MODULE LOADEX path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]

    Cost: O(1); always refused."""
    raise CommandError(MODULE_LOAD_REFUSED)


@command("module|unload", arity=3, flags="admin noscript no_async_loading", group="server",
         since="4.0.0", complexity="O(1)", summary="Unload a module")
def module_unload(ctx: Ctx, argv: list[bytes]) -> Reply:
    """MODULE UNLOAD name

    Cost: O(1): no module of any name is loaded."""
    raise CommandError(MODULE_UNLOAD_NONE)
