"""Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.

The scripts themselves (the cache, the interpreter, running past
busy-reply-threshold) are the engine's ``scripts``
(:mod:`tidelog.scripting`); these handlers parse arguments and declare
propagation: a script's effects are the commands it ran (gathered by the
engine), never the EVAL itself; SCRIPT LOAD and SCRIPT FLUSH propagate
nothing (as in Redis 7+: a replica never needs the script).
"""

from __future__ import annotations

from typing import Any

from ... import errors
from ...errors import CommandError
from ...glob import glob_match
from ...rdb import values as rdb
from ...resp.replies import OK, Map, SetReply, SimpleString
from ..args import ArgReader
from ..contract import Ctx
from ..key_specs import ALL_SHARDS, ND, SCRIPT_RO, SCRIPT_RW, ks
from ..replies import help_command
from ..table import command


def _numkeys(argv: list[bytes], not_integer: bytes) -> int:
    """EVAL's and FCALL's numkeys (argv[2]), checked against the arguments."""
    text = argv[2]
    digits = text[1:] if text[:1] == b"-" else text
    if not digits.isdigit() or (len(digits) > 1 and digits[:1] == b"0") \
            or not -(2 ** 63) <= int(text) < 2 ** 63:
        raise CommandError(not_integer)
    numkeys = int(text)
    if numkeys < 0:
        raise CommandError(errors.NUMKEYS_NEGATIVE)
    if numkeys > len(argv) - 3:
        raise CommandError(errors.NUMKEYS_TOO_MANY)
    return numkeys


def _run(ctx: Ctx, argv: list[bytes], by_sha: bool, read_only: bool) -> Any:
    scripts = ctx.engine.scripts
    numkeys = _numkeys(argv, errors.NOT_INTEGER)
    ctx.no_propagation()  # the script's commands propagate, never EVAL itself
    if by_sha:
        script = scripts.cache.get(argv[1].lower())
        if script is None:
            raise CommandError(errors.NOSCRIPT)
    else:
        script = scripts.load(argv[1])
    keys = argv[3:3 + numkeys]
    args = argv[3 + numkeys:]
    return scripts.run(ctx.client, script, keys, args, read_only, argv)


_EVAL_FLAGS = "noscript stale skip_monitor no_mandatory_keys movablekeys"


@command("eval", arity=-3, flags=_EVAL_FLAGS, group="scripting", since="2.6.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a server-side Lua script.",
         key_specs=[ks("RW access update", 2, notes=SCRIPT_RW, keynum=(0, 1, 1))])
def eval_(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVAL script numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, False, False)


@command("evalsha", arity=-3, flags=_EVAL_FLAGS, group="scripting", since="2.6.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a server-side Lua script by SHA1 digest.",
         key_specs=[ks("RW access update", 2, keynum=(0, 1, 1))])
def evalsha(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, True, False)


_EVAL_RO_FLAGS = "readonly noscript stale skip_monitor no_mandatory_keys movablekeys"


@command("eval_ro", arity=-3, flags=_EVAL_RO_FLAGS, group="scripting", since="7.0.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a read-only server-side Lua script.", categories=("-@read",),
         key_specs=[ks("RO access", 2, notes=SCRIPT_RO, keynum=(0, 1, 1))])
def eval_ro(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, False, True)


@command("evalsha_ro", arity=-3, flags=_EVAL_RO_FLAGS, group="scripting", since="7.0.0",
         complexity="Depends on the script that is executed.",
         summary="Executes a read-only server-side Lua script by SHA1 digest.",
         categories=("-@read",),
         key_specs=[ks("RO access", 2, keynum=(0, 1, 1))])
def evalsha_ro(ctx: Ctx, argv: list[bytes]) -> Any:
    """EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    return _run(ctx, argv, True, True)


# -- SCRIPT ---------------------------------------------------------------------------
@command("script", arity=-2, group="scripting", since="2.6.0",
         complexity="Depends on subcommand.", summary="A container for Lua scripts management commands",
         container=True, help=(
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
))
def script(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT <subcommand> [<arg> [value] [opt] ...]"""


@command("script|load", arity=3, flags="noscript stale", group="scripting",
         since="2.6.0", complexity="O(N) with N being the length in bytes of the script body.",
         summary="Loads a server-side Lua script to the script cache.",
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"))
def script_load(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT LOAD script"""
    script = ctx.engine.scripts.load(argv[2])
    return script.sha


@command("script|exists", arity=-3, flags="noscript", group="scripting", since="2.6.0",
         complexity="O(N) with N being the number of scripts to check (so checking a single "
         "script is an O(1) operation).",
         summary="Determines whether server-side Lua scripts exist in the script cache.",
         tips=(ALL_SHARDS, "response_policy:agg_logical_and"))
def script_exists(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT EXISTS sha1 [sha1 ...]"""
    cache = ctx.engine.scripts.cache
    return [1 if sha.lower() in cache else 0 for sha in argv[2:]]


@command("script|flush", arity=-2, flags="noscript", group="scripting",
         since="2.6.0", complexity="O(N) with N being the number of scripts in cache",
         summary="Removes all server-side Lua scripts from the script cache.",
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"))
def script_flush(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT FLUSH [ASYNC | SYNC]"""
    if len(argv) > 3 or (len(argv) == 3 and argv[2].lower() not in (b"async", b"sync")):
        raise CommandError(errors.SCRIPT_FLUSH_MODE)
    ctx.engine.scripts.flush()
    return OK


@command("script|kill", arity=2, flags="noscript allow_busy", group="scripting", since="2.6.0",
         complexity="O(1)", summary="Terminates a server-side Lua script during execution.",
         tips=(ALL_SHARDS, "response_policy:one_succeeded"))
def script_kill(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT KILL"""
    ctx.engine.scripts.kill()
    return OK


@command("script|debug", arity=3, flags="noscript", group="scripting", since="3.2.0",
         complexity="O(1)",
         summary="Sets the debug mode of server-side Lua scripts.")
def script_debug(ctx: Ctx, argv: list[bytes]) -> Any:
    """SCRIPT DEBUG <YES | SYNC | NO>"""
    mode = argv[2].lower()
    if mode == b"no":
        return OK
    if mode in (b"yes", b"sync"):
        raise CommandError(errors.SCRIPT_DEBUG_UNSUPPORTED)
    raise CommandError(errors.SCRIPT_DEBUG_MODE)


help_command("script", group="scripting", since="5.0.0",
             summary="Returns helpful text about the different subcommands.")


# -- FCALL and FUNCTION ---------------------------------------------------------------
def _fcall(ctx: Ctx, argv: list[bytes], read_only: bool) -> Any:
    scripts = ctx.engine.scripts
    function = scripts.function(argv[1])
    numkeys = _numkeys(argv, errors.FUNCTION_BAD_NUMKEYS)
    ctx.no_propagation()
    return scripts.run(ctx.client, function, argv[3:3 + numkeys], argv[3 + numkeys:], read_only,
                       argv)


@command("fcall", arity=-3, flags=_EVAL_FLAGS, group="scripting", since="7.0.0",
         complexity="Depends on the function that is executed.", summary="Invokes a function.",
         key_specs=[ks("RW access update", 2, notes=SCRIPT_RW, keynum=(0, 1, 1))])
def fcall(ctx: Ctx, argv: list[bytes]) -> Any:
    """FCALL function numkeys [key [key ...]] [arg [arg ...]]"""
    return _fcall(ctx, argv, False)


@command("fcall_ro", arity=-3, flags=_EVAL_RO_FLAGS, group="scripting", since="7.0.0",
         complexity="Depends on the function that is executed.",
         summary="Invokes a read-only function.", categories=("-@read",),
         key_specs=[ks("RO access", 2, notes=SCRIPT_RO, keynum=(0, 1, 1))])
def fcall_ro(ctx: Ctx, argv: list[bytes]) -> Any:
    """FCALL_RO function numkeys [key [key ...]] [arg [arg ...]]"""
    return _fcall(ctx, argv, True)


@command("function", arity=-2, group="scripting", since="7.0.0",
         complexity="Depends on subcommand.", summary="A container for function commands.",
         container=True, help=(
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using "
    "FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore "
    "policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
    "replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance "
    "of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
))
def function(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION <subcommand> [<arg> [value] [opt] ...]"""


@command("function|load", arity=-3, flags="write denyoom noscript", group="scripting",
         since="7.0.0", complexity="O(1) (considering compilation time is redundant)",
         summary="Creates a library.",
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def function_load(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION LOAD [REPLACE] function-code"""
    replace = False
    r = ArgReader(argv, start=2)
    while r.remaining() > 1:  # the last argument is the code
        option = r.next_bytes()
        if option.lower() == b"replace":
            replace = True
        else:
            raise CommandError(errors.FUNCTION_LOAD_OPTION % option)
    name = ctx.engine.scripts.load_library(argv[-1], replace)
    ctx.changed()
    ctx.propagate_argv()
    return name


@command("function|delete", arity=3, flags="write noscript", group="scripting", since="7.0.0",
         complexity="O(1)", summary="Deletes a library and its functions.",
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def function_delete(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION DELETE library-name"""
    ctx.engine.scripts.delete_library(argv[2])
    ctx.changed()
    ctx.propagate_argv()
    return OK


@command("function|flush", arity=-2, flags="write noscript", group="scripting", since="7.0.0",
         complexity="O(N) where N is the number of functions deleted",
         summary="Deletes all libraries and functions.",
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def function_flush(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION FLUSH [ASYNC | SYNC]"""
    if len(argv) > 3:  # as Redis words it
        raise errors.subcommand_syntax(argv[1], argv[0])
    if len(argv) == 3 and argv[2].lower() not in (b"async", b"sync"):
        raise CommandError(errors.FUNCTION_FLUSH_MODE)
    ctx.engine.scripts.flush_functions()
    ctx.changed()
    ctx.propagate_argv()
    return OK


@command("function|kill", arity=2, flags="noscript allow_busy", group="scripting", since="7.0.0",
         complexity="O(1)", summary="Terminates a function during execution.",
         tips=(ALL_SHARDS, "response_policy:one_succeeded"))
def function_kill(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION KILL"""
    ctx.engine.scripts.kill(function=True)
    return OK


@command("function|list", arity=-2, flags="noscript", group="scripting", since="7.0.0",
         complexity="O(N) where N is the number of functions",
         summary="Returns information about all libraries.",
         tips=("nondeterministic_output_order",))
def function_list(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION LIST [LIBRARYNAME library-name-pattern] [WITHCODE]"""
    pattern = None
    with_code = False
    r = ArgReader(argv, start=2)
    while r.more():
        arg = r.next_bytes()
        word = arg.lower()
        if word == b"withcode" and not with_code:  # each option once, as in Redis
            with_code = True
        elif word == b"libraryname" and pattern is None:
            if not r.more():
                raise CommandError(errors.FUNCTION_LIST_NO_NAME)
            pattern = r.next_bytes()
        else:
            raise CommandError(errors.FUNCTION_LIST_ARG % arg)
    out = []
    for library in ctx.engine.scripts.libraries.values():
        if pattern is not None and not glob_match(pattern, library.name):
            continue
        functions = [Map([(b"name", f.sha), (b"description", f.description),
                          (b"flags", SetReply([SimpleString(flag) for flag in f.flag_order]))])
                     for f in library.functions.values()]
        items: list[tuple[Any, Any]] = [(b"library_name", library.name), (b"engine", b"LUA"),
                                        (b"functions", functions)]
        if with_code:
            items.append((b"library_code", library.code))
        out.append(Map(items))
    return out


@command("function|stats", arity=2, flags="noscript allow_busy", group="scripting",
         since="7.0.0", complexity="O(1)",
         summary="Returns information about a function during execution.",
         tips=(ND, ALL_SHARDS, "response_policy:special"))
def function_stats(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION STATS"""
    scripts = ctx.engine.scripts
    running = None
    job = scripts.busy
    if job is not None:
        running = Map([(b"name", job.script.sha), (b"command", job.argv),
                       (b"duration_ms", job.duration_ms())])
    count = sum(len(lib.functions) for lib in scripts.libraries.values())
    return Map([(b"running_script", running),
                (b"engines", Map([(b"LUA", Map([(b"libraries_count", len(scripts.libraries)),
                                                 (b"functions_count", count)]))]))])


help_command("function", group="scripting", since="7.0.0",
             summary="Returns helpful text about the different subcommands.")


# FUNCTION DUMP's payload: per library the RDB function opcode (0xF5) and its
# code as an RDB string, the RDB version and a CRC-64, as redis-server 7.0
# writes it (tidelog.rdb.values.libraries_payload).
@command("function|dump", arity=2, flags="noscript", group="scripting", since="7.0.0",
         complexity="O(N) where N is the number of functions",
         summary="Dumps all libraries into a serialized binary payload.")
def function_dump(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION DUMP

    O(N) in the libraries' code size."""
    try:
        version = int(ctx.config["rdb-version"])
    except KeyError:
        version = rdb.DEFAULT_VERSION
    codes = [lib.code for lib in ctx.engine.scripts.libraries.values()]
    return rdb.libraries_payload(codes, version, bool(ctx.config["rdbcompression"]))


@command("function|restore", arity=-3, flags="write denyoom noscript", group="scripting",
         since="7.0.0", complexity="O(N) where N is the number of functions on the payload",
         summary="Restores all libraries from a payload.",
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def function_restore(ctx: Ctx, argv: list[bytes]) -> Any:
    """FUNCTION RESTORE serialized-value [FLUSH | APPEND | REPLACE]

    O(N) in the payload's size."""
    policy = b"APPEND"
    if len(argv) > 4:  # as Redis words it
        raise errors.subcommand_syntax(argv[1], argv[0])
    if len(argv) == 4:
        policy = argv[3].upper()
        if policy not in (b"FLUSH", b"APPEND", b"REPLACE"):
            raise CommandError(errors.FUNCTION_RESTORE_POLICY)
    try:
        codes = rdb.libraries_from_payload(argv[2])
    except rdb.PayloadError as exc:
        raise CommandError(errors.DUMP_PAYLOAD_WRONG if exc.version_or_checksum
                           else errors.FUNCTION_RESTORE_BAD_DATA) from None
    ctx.engine.scripts.restore_libraries(codes, policy)
    ctx.changed()
    ctx.propagate_argv()
    return OK
