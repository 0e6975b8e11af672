"""The script cache and the running of scripts (EVAL, EVALSHA, FCALL, SCRIPT, FUNCTION).

Atomicity and BUSY.  A script runs on the event-loop thread, inside the
command that called it, so nothing else runs meanwhile and its commands
execute with the engine to themselves.  A Lua count hook calls back every
so many instructions: once the script has run longer than
``busy-reply-threshold`` milliseconds, each call lets the network layer
serve the other clients from inside the hook (``busy_poll``, which the
server installs): every command but SCRIPT KILL, FUNCTION KILL, FUNCTION
STATS and SHUTDOWN NOSAVE is answered ``-BUSY``.  SCRIPT KILL sets a flag
the next hook call reads, and the script ends with an error.  Without a
server (embedded engines, tests) a script simply runs to its end.

Effects: the commands a script ran are gathered as a transaction's are,
and go out once it ends, wrapped in MULTI/EXEC when there are several.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import errors
from ..acl.selectors import ACL_OK
from ..commands import table
from ..commands.contract import ClientState
from ..errors import CommandError, CountedError
from ..resp.parser import split_inline
from ..resp.replies import ErrorReply, RawReply
from .runtime import CompileError, LibraryError, LuaRuntime, sha1hex

log = logging.getLogger("tidelog")

# How long a library's code may run in FUNCTION LOAD (Redis: 500 ms).
LOAD_TIMEOUT_S = 0.5

SHEBANG_FLAGS = frozenset({b"no-writes", b"allow-oom", b"allow-stale", b"no-cluster",
                           b"allow-cross-slot-keys"})


@dataclass(eq=False)
class Script:
    sha: bytes                 # a function's name, for functions
    body: bytes
    fn: Any
    flags: frozenset[bytes] = frozenset()
    shebang: bool = False      # EVAL scripts: flags came from a shebang line
    function: bool = False     # a library's function (FCALL)
    description: bytes | None = None
    flag_order: tuple[bytes, ...] = ()


@dataclass(eq=False)
class Library:
    name: bytes
    code: bytes
    functions: dict[bytes, Script]


_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def valid_name(name: bytes) -> bool:
    return bool(name) and all(c in _NAME_CHARS for c in name)


def parse_library_header(code: bytes) -> bytes:
    """The library name of ``#!lua name=<lib>``; CommandError as Redis words it."""
    if not code.startswith(b"#!"):
        raise CommandError(errors.FUNCTION_NO_METADATA)
    line = code.partition(b"\n")[0]
    words = split_inline(line)  # split as Redis splits it: quotes allowed (name="foo")
    if not words:
        raise CommandError(errors.FUNCTION_INVALID_METADATA)
    engine = words[0][2:]
    if engine.lower() != b"lua":
        raise CommandError(errors.FUNCTION_NO_ENGINE % engine)
    name = None
    for word in words[1:]:
        if word.startswith(b"name="):
            if name is not None:
                raise CommandError(errors.FUNCTION_NAME_TWICE)
            name = word[5:]
        else:
            raise CommandError(errors.FUNCTION_BAD_METADATA % word)
    if name is None:
        raise CommandError(errors.FUNCTION_NO_NAME)
    if not valid_name(name):
        raise CommandError(errors.FUNCTION_BAD_NAME)
    return name


@dataclass(eq=False)
class Job:
    script: Script
    client: ClientState
    keys: list[bytes]
    args: list[bytes]
    read_only: bool
    wrote: bool = False
    kill: bool = False
    abandon: bool = False
    argv: list[bytes] = field(default_factory=list)
    started: float = 0.0

    def duration_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)


def parse_shebang(body: bytes) -> tuple[bytes, frozenset[bytes]]:
    """The code Lua compiles (the shebang line left empty, so line numbers
    stay) and the script's flags; CommandError as Redis words it."""
    if not body.startswith(b"#!"):
        return body, frozenset()
    line, nl, rest = body.partition(b"\n")
    words = line.split(b" ")
    if words[0] != b"#!lua":
        raise CommandError(errors.SCRIPT_SHEBANG_ENGINE % words[0])
    flags: set[bytes] = set()
    for word in words[1:]:
        if not word:
            continue
        if word.startswith(b"flags="):
            for flag in word[6:].split(b","):
                if not flag:
                    continue
                if flag not in SHEBANG_FLAGS:
                    raise CommandError(errors.SCRIPT_SHEBANG_FLAG % flag)
                flags.add(flag)
        else:
            raise CommandError(errors.SCRIPT_SHEBANG_OPTION % word)
    return nl + rest, frozenset(flags)


class Scripts:
    """The engine's scripting: the cache of EVAL scripts and the runner."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.cache: dict[bytes, Script] = {}
        self.libraries: dict[bytes, Library] = {}   # FUNCTION LOAD, by library name
        # function name (lower case: FCALL's names are case-insensitive, as in
        # Redis) -> its library
        self.functions: dict[bytes, Library] = {}
        self._runtime: LuaRuntime | None = None
        self._load_deadline = 0.0  # while FUNCTION LOAD runs a library's code
        self.current: Job | None = None   # the script running
        self.busy: Job | None = None      # the script running past the threshold
        # Installed by the server: serve the other clients while a script is
        # busy (given the script's client), and the end of that.
        self.busy_poll: Callable[[ClientState], None] | None = None
        self.busy_end: Callable[[], None] | None = None
        self.client = ClientState(id=0, addr="", name=b"")  # the scripts' own client

    # -- the interpreter ----------------------------------------------------------------
    @property
    def runtime(self) -> LuaRuntime:
        if self._runtime is None:
            self._runtime = LuaRuntime(self._execute_command, self._kill_check, self._log,
                                       self._acl_check)
        return self._runtime

    def _acl_check(self, argv: list[bytes]) -> bool | None:
        """redis.acl_check_cmd: whether the client running the script may run
        ``argv`` (None: no such command)."""
        spec = table.lookup(argv)
        if spec is None or (spec.subcommands and spec.handler is None and len(argv) > 1):
            return None
        user = self.current.client.user if self.current is not None else None
        return user is None or user.check(spec, argv)[0] == ACL_OK

    def _log(self, level: int, text: bytes) -> None:
        log.log((logging.DEBUG, logging.DEBUG, logging.INFO, logging.WARNING)[max(0, min(level, 3))],
                "%s", text.decode("utf-8", "replace"))

    # -- the cache ----------------------------------------------------------------------
    def load(self, body: bytes) -> Script:
        """Compile a script (cached by its SHA1); CommandError when it does not compile."""
        sha = sha1hex(body)
        script = self.cache.get(sha)
        if script is None:
            code, flags = parse_shebang(body)
            try:
                fn = self.runtime.compile(code)
            except CompileError as exc:
                raise CommandError(errors.SCRIPT_COMPILE + exc.message) from None
            script = self.cache[sha] = Script(sha, body, fn, flags, body.startswith(b"#!"))
        return script

    # -- functions ----------------------------------------------------------------------
    def load_library(self, code: bytes, replace: bool) -> bytes:
        """FUNCTION LOAD: the library's name; CommandError as Redis words it."""
        name = parse_library_header(code)
        old = self.libraries.get(name)
        if old is not None and not replace:
            raise CommandError(errors.FUNCTION_LIBRARY_EXISTS % name)
        body = b"\n" + code.partition(b"\n")[2] if b"\n" in code else b""
        self._load_deadline = time.monotonic() + LOAD_TIMEOUT_S
        try:
            registered = self.runtime.load_library(body)
        except CompileError as exc:
            raise CommandError(errors.FUNCTION_COMPILE + exc.message) from None
        except LibraryError as exc:
            raise CommandError(errors.FUNCTION_REGISTER + exc.message) from None
        finally:
            self._load_deadline = 0.0
        functions: dict[bytes, Script] = {}
        for fname, callback, flags, description in registered:
            if not valid_name(fname):
                raise CommandError(errors.FUNCTION_REGISTER + errors.FUNCTION_BAD_NAME)
            if fname in functions:
                raise CommandError(errors.FUNCTION_REGISTER + errors.FUNCTION_DUPLICATE)
            functions[fname] = Script(fname, b"", callback, frozenset(flags), True, True,
                                      description, tuple(flags))
        if not functions:
            raise CommandError(errors.FUNCTION_NONE_REGISTERED)
        for fname in functions:
            owner = self.functions.get(fname.lower())
            if owner is not None and owner is not old:
                raise CommandError(errors.FUNCTION_EXISTS % fname)
        if old is not None:
            self.delete_library(name)
        library = self.libraries[name] = Library(name, code, functions)
        for fname in functions:
            self.functions[fname.lower()] = library
        return name

    def delete_library(self, name: bytes) -> None:
        library = self.libraries.pop(name, None)
        if library is None:
            raise CommandError(errors.FUNCTION_NO_LIBRARY)
        for fname in library.functions:
            self.functions.pop(fname.lower(), None)

    def flush_functions(self) -> None:
        self.libraries.clear()
        self.functions.clear()

    def restore_libraries(self, codes: list[bytes], policy: bytes) -> None:
        """FUNCTION RESTORE: load ``codes`` by ``policy`` (FLUSH, APPEND or
        REPLACE), all or nothing: on a CommandError (as Redis words it) the
        libraries are what they were.  O(total code size)."""
        saved_libraries, saved_functions = dict(self.libraries), dict(self.functions)
        try:
            if policy == b"FLUSH":
                self.flush_functions()
            elif policy == b"APPEND":
                for code in codes:
                    name = parse_library_header(code)
                    if name in self.libraries:
                        raise CommandError(errors.FUNCTION_RESTORE_EXISTS % name)
            for code in codes:
                self.load_library(code, policy != b"APPEND")
        except CommandError:
            self.libraries, self.functions = saved_libraries, saved_functions
            raise

    def function(self, name: bytes) -> Script:
        key = name.lower()
        library = self.functions.get(key)
        if library is None:
            raise CommandError(errors.FUNCTION_NOT_FOUND)
        script = library.functions.get(name)
        if script is None:  # named in another case
            script = next(s for f, s in library.functions.items() if f.lower() == key)
        return script

    def flush(self) -> None:
        self.cache.clear()

    def memory(self) -> int:
        return sum(len(s.body) for s in self.cache.values())

    # -- running ------------------------------------------------------------------------
    def run(self, client: ClientState, script: Script, keys: list[bytes], args: list[bytes],
            read_only: bool, argv: list[bytes] | None = None) -> Any:
        """Run a script for a client: its reply; script errors raise CommandError."""
        engine = self.engine
        if read_only and script.shebang and b"no-writes" not in script.flags:
            raise CommandError(errors.SCRIPT_RO_WRITE_FLAG)
        job = Job(script, client, keys, args, read_only or b"no-writes" in script.flags)
        job.argv = argv or []
        job.started = time.monotonic()
        # Its commands' effects go out as one unit, after it (or with the
        # EXEC that runs it), and no blocked client is served meanwhile.
        began = engine.begin_unit()
        self.current = job
        try:
            reply = self._execute(job)
        except Exception:  # a bug: the client still gets an answer
            log.exception("internal error running a script")
            engine.internal_errors += 1
            reply = _Failure(errors.INTERNAL)
        finally:
            self.current = None
            self.client.himport = None
            effects = engine.end_unit(began)
            if self.busy is not None:
                self.busy = None
                if self.busy_end is not None:
                    self.busy_end()
        if effects and not job.abandon:  # (SHUTDOWN NOSAVE stopped it: nothing of it goes out)
            engine.emit_unit(effects)
        if job.abandon:  # the server stops: the client is closed unanswered, as Redis does
            client.close_after_reply = True
            return RawReply(b"")
        if reply.__class__ is _Failure:
            raise (CountedError if reply.counted else CommandError)(reply.message)
        return reply

    def _kill_check(self) -> bytes | None:
        """The count hook: why to stop the script (None: go on); past the
        threshold, the other clients are served (answered -BUSY) from here."""
        job = self.current
        if job is None:  # FUNCTION LOAD running a library's code
            if self._load_deadline and time.monotonic() > self._load_deadline:
                return errors.FUNCTION_LOAD_TIMEOUT
            return None
        if not job.kill and self.busy_poll is not None:
            if self.busy is None and time.monotonic() - job.started >= \
                    self.engine.config["busy-reply-threshold"] / 1000:
                self.busy = job
                log.warning("Slow script detected: still in execution after %d milliseconds. "
                            "You can try killing the script using the SCRIPT KILL command.",
                            job.duration_ms())
            if self.busy is not None:
                try:
                    self.busy_poll(job.client)
                except Exception:  # a bug: the script goes on; say so
                    log.exception("serving clients while a script is busy failed")
                    self.engine.internal_errors += 1
        return errors.SCRIPT_KILLED if job.kill else None

    def kill(self, function: bool = False) -> None:
        """SCRIPT KILL (``function`` False) / FUNCTION KILL (True): each stops
        only its own kind; the other kind gets -BUSY, as in Redis."""
        job = self.busy
        if job is None:
            raise CommandError(errors.NOTBUSY)
        if job.script.function != function:
            raise CommandError(errors.BUSY_FUNCTION if job.script.function else errors.BUSY)
        if job.wrote:
            raise CommandError(errors.UNKILLABLE)
        job.kill = True

    def abandon(self) -> None:
        """SHUTDOWN NOSAVE while a script runs: stop it, and drop its effects."""
        job = self.current
        if job is not None:
            job.kill = job.abandon = True

    def _execute(self, job: Job) -> Any:
        rt = self.runtime
        client = self.client
        client.db = job.client.db
        client.user = job.client.user  # its commands are checked as the caller's
        # HIMPORT fieldsets last one script call, as Redis's script client's
        client.himport = None
        if job.script.function:
            ok, value = rt.run_function(job.script.fn, job.keys, job.args)
        else:
            ok, value = rt.run(job.script.fn, job.keys, job.args)
        if ok:
            rt.client_resp = job.client.protocol
            reply = rt.to_reply(value)
            if reply.__class__ is ErrorReply:  # the script replies an error: the call failed
                return _Failure(reply.message, rt.error_counted(value))
            return reply
        message, source, line, counted = value
        if source is not None and line is not None:
            message = b"%s script: %s, on %s:%d." % (message, job.script.sha, source, line)
        return _Failure(message, counted)

    def _execute_command(self, argv: list[bytes], raise_errors: bool) -> tuple[bool, Any]:
        """redis.call / redis.pcall (worker thread): ``(True, Lua value)`` or
        ``(False, error text)``."""
        job = self.current
        rt = self._runtime
        assert job is not None and rt is not None
        client = self.client
        client.protocol = rt.resp
        reply, wrote = self.engine.script_command(client, argv, job.read_only)
        if wrote:
            job.wrote = True
        if reply.__class__ is ErrorReply:
            return False, reply.message
        return True, rt.to_lua(reply)


@dataclass(frozen=True)
class _Failure:
    message: bytes
    counted: bool = False  # already counted in the error statistics
