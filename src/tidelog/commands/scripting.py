"""Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.

The scripts themselves (the cache, the interpreter, running past
busy-reply-threshold) are the engine's ``scripts``
(:mod:`tidelog.scripting`); these handlers parse arguments and declare
propagation: a script's effects are the commands it ran (gathered by the
engine), never the EVAL itself; SCRIPT LOAD and SCRIPT FLUSH propagate as
they came.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from ..errors import CommandError
from ..resp.replies import OK
from .contract import Ctx
from .replies import help_reply
from .table import command


def _run(ctx: Ctx, argv: list[bytes], by_sha: bool, read_only: bool) -> Any:
    scripts = ctx.engine.scripts  # type: ignore[attr-defined]
    try:
        numkeys = int(argv[2])
        if not argv[2].lstrip(b"-").isdigit():
            raise ValueError
    except ValueError:
        raise CommandError(errors.NOT_INTEGER) from None
    if numkeys < 0:
        raise CommandError(errors.NUMKEYS_NEGATIVE)
    if numkeys > len(argv) - 3:
        raise CommandError(errors.NUMKEYS_TOO_BIG)
    ctx.no_propagation()  # the script's commands propagate, never EVAL itself
    if by_sha:
        script = scripts.cache.get(argv[1].lower())
        if script is None:
            raise CommandError(errors.NOSCRIPT)
    else:
        script = scripts.load(argv[1])
    keys = argv[3:3 + numkeys]
    args = argv[3 + numkeys:]
    return scripts.run(ctx.client, script, keys, args, read_only)


_EVAL_FLAGS = "noscript skip_monitor may_replicate no_mandatory_keys stale"


@command("eval", arity=-3, flags=_EVAL_FLAGS, group="scripting", since="2.6.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a server-side Lua script.")
def eval_(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVAL script numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, False, False)


@command("evalsha", arity=-3, flags=_EVAL_FLAGS, group="scripting", since="2.6.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a server-side Lua script by SHA1 digest.")
def evalsha(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, True, False)


_EVAL_RO_FLAGS = "readonly noscript skip_monitor no_mandatory_keys stale"


@command("eval_ro", arity=-3, flags=_EVAL_RO_FLAGS, group="scripting", since="7.0.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a read-only server-side Lua script.")
def eval_ro(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, False, True)


@command("evalsha_ro", arity=-3, flags=_EVAL_RO_FLAGS, group="scripting", since="7.0.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a read-only server-side Lua script by SHA1 digest.")
def evalsha_ro(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, True, True)


# -- SCRIPT ---------------------------------------------------------------------------
@command("script", arity=-2, group="scripting", since="2.6.0",
         complexity="Depends on subcommand.", summary="A container for Lua scripts management commands",
         container=True)
def script(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT <subcommand> [<arg> [value] [opt] ...]"""


@command("script|load", arity=3, flags="noscript may_replicate stale", group="scripting",
         since="2.6.0", complexity="O(N) with N being the length in bytes of the script body.",
         summary="Loads a server-side Lua script to the script cache.")
def script_load(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT LOAD script"""
    script = ctx.engine.scripts.load(argv[2])  # type: ignore[attr-defined]
    ctx.propagate_argv()
    return script.sha


@command("script|exists", arity=-3, flags="noscript stale", group="scripting", since="2.6.0",
         complexity="O(N) with N being the number of scripts to check (so checking a single "
         "script is an O(1) operation).",
         summary="Determines whether server-side Lua scripts exist in the script cache.")
def script_exists(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT EXISTS sha1 [sha1 ...]"""
    cache = ctx.engine.scripts.cache  # type: ignore[attr-defined]
    return [1 if sha.lower() in cache else 0 for sha in argv[2:]]


@command("script|flush", arity=-2, flags="noscript may_replicate", group="scripting",
         since="2.6.0", complexity="O(N) with N being the number of scripts in cache",
         summary="Removes all server-side Lua scripts from the script cache.")
def script_flush(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT FLUSH [ASYNC | SYNC]"""
    if len(argv) > 3 or (len(argv) == 3 and argv[2].lower() not in (b"async", b"sync")):
        raise CommandError(errors.SCRIPT_FLUSH_MODE)
    ctx.engine.scripts.flush()  # type: ignore[attr-defined]
    ctx.propagate_argv()
    return OK


@command("script|kill", arity=2, flags="noscript allow_busy", group="scripting", since="2.6.0",
         complexity="O(1)", summary="Terminates a server-side Lua script during execution.")
def script_kill(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT KILL"""
    ctx.engine.scripts.kill()  # type: ignore[attr-defined]
    return OK


_SCRIPT_HELP = [
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
]


@command("script|help", arity=2, flags="loading stale", group="scripting", since="5.0.0",
         complexity="O(1)", summary="Returns helpful text about the different subcommands.")
def script_help(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT HELP"""
    return help_reply(_SCRIPT_HELP)
