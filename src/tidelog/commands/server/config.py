"""CONFIG GET, SET, RESETSTAT, REWRITE and HELP, over :mod:`tidelog.config`.

CONFIG SET appendonly asks the engine's persistence to start or stop the
AOF; port, bind, tls-port and the tls-* options ask the network layer to
rebind or reconfigure its listeners; every other option is read where it is
used.
"""

from __future__ import annotations

import logging
import os

from ... import errors
from ...config import ALIASES, LOG_LEVELS, OPTIONS, ConfigError, split_config_args
from ...errors import (
    NO_CONFIG_FILE,
    SYNTAX,
    CommandError,
    config_set_failed,
    unknown_config,
)
from ...glob import glob_match
from ...resp.replies import OK, Map
from ..args import ArgReader
from ..contract import Ctx
from ..replies import help_command, repr_arg
from ..table import command

log = logging.getLogger("tidelog")


# =====================================================================================
# CONFIG
# =====================================================================================


# Options the engine caches (Engine.refresh_thresholds).
_THRESHOLDS = frozenset({"slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold",
                         "latency-tracking"})


def _apply_config(ctx: Ctx, name: str) -> None:
    """Side effects of a changed option (most are read where used)."""
    if name in _THRESHOLDS:
        ctx.engine.refresh_thresholds()
    elif name == "loglevel":
        logging.getLogger("tidelog").setLevel(LOG_LEVELS[ctx.config["loglevel"]])
    elif name == "notify-keyspace-events":
        ctx.engine.set_notify(ctx.config[name])
    elif name == "appendonly":
        try:
            ctx.engine.replication.aof_switched(ctx.config["appendonly"])
            ctx.engine.persistence.set_appendonly(ctx.config["appendonly"])
        except OSError as exc:
            logging.getLogger("tidelog").warning("Unable to turn on the AOF: %s", exc)
            ctx.config.set("appendonly", "no")
            raise config_set_failed(b"appendonly", errors.CONFIG_AOF_FAILED) from None
    elif name in ("replica-read-only", "min-replicas-to-write", "min-replicas-max-lag",
                  "replica-serve-stale-data"):
        ctx.engine.replication.refresh_write_guard()
    elif name == "maxmemory":
        ctx.engine.set_maxmemory(ctx.config["maxmemory"])
    elif name in ("maxmemory-policy", "lfu-log-factor", "lfu-decay-time"):
        ctx.engine.set_policy()
    elif name == "repl-backlog-size":
        ctx.engine.replication.resize_backlog(ctx.config["repl-backlog-size"])
    elif name == "requirepass":  # the default user's password
        ctx.engine.acl.set_default_password(
            ctx.config["requirepass"].encode("utf-8", "surrogateescape"))
        ctx.engine.users_changed(ctx.client)
    elif name == "acllog-max-len":
        acl = ctx.engine.acl
        acl.log_max = ctx.config["acllog-max-len"]
        while len(acl.log) > acl.log_max:
            acl.log.pop()
    elif name == "acl-pubsub-default":
        ctx.engine.acl.allchannels_default = ctx.config["acl-pubsub-default"] == "allchannels"
    elif name in ("port", "bind", "tls-port") or name.startswith("tls-"):
        hook = ctx.engine.listen_hook  # None: no network layer (embedded engine, tests)
        if hook is not None:
            why = hook(name if name in ("port", "bind", "tls-port") else "tls")
            if why is not None:
                raise config_set_failed(name.encode(), why)
    elif name == "cluster-slot-stats-enabled":
        ctx.engine.set_slot_stats(ctx.config[name])


@command("config", arity=-2, group="server", since="2.0.0", complexity="Depends on subcommand.",
         summary="A container for server configuration commands", container=True, help=(
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
))
def config_(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG subcommand [argument ...]"""


def matching_options(ctx: Ctx, patterns: list[bytes]) -> list[tuple[bytes, bytes]]:
    """(name, value) for every option matching one of the patterns, each once.

    A pattern without glob characters is an exact, case-insensitive name and
    is answered with the name as given (as Redis does)."""
    found: dict[str, bytes] = {}  # name (an alias kept apart) -> name shown
    for pattern in patterns:
        if not any(c in pattern for c in b"*?["):
            name = pattern.decode("latin-1").lower()
            name = ALIASES.get(name, name)
            if name in OPTIONS and name not in found:
                found[name] = pattern
            continue
        for name in (*OPTIONS, *ALIASES):  # a pattern matches old names too, as in Redis
            if OPTIONS[ALIASES.get(name, name)].hidden:  # (by exact name only)
                continue
            if name not in found and glob_match(pattern, name.encode(), nocase=True):
                found[name] = name.encode()
    return [(shown, ctx.config.show(ALIASES.get(name, name)).encode())
            for name, shown in found.items()]


@command("config|get", arity=-3, flags="admin noscript loading stale", group="server",
         since="2.0.0", complexity="O(N) when N is the number of configuration parameters provided",
         summary="Get the values of configuration parameters")
def config_get(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG GET parameter [parameter ...]"""
    r = ArgReader(argv, 2)
    patterns = r.take(r.remaining())
    r.finish()
    return Map(matching_options(ctx, patterns))


@command("config|set", arity=-4, flags="admin noscript loading stale", group="server",
         since="2.0.0", complexity="O(N) when N is the number of configuration parameters provided",
         summary="Set configuration parameters to the given values",
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"))
def config_set(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG SET parameter value [parameter value ...]"""
    r = ArgReader(argv, 2)
    if r.remaining() % 2:  # parameter value pairs
        raise CommandError(SYNTAX)
    pairs = []
    while r.more():
        pairs.append((r.next_bytes(), r.next_bytes()))
    r.finish()
    names: list[str] = []
    shown: list[bytes] = []  # the names errors quote: lower case, an old name as it is
    for given, _ in pairs:  # names first: unknown, immutable, duplicate
        name = given.decode("latin-1").lower()
        shown.append(name.encode("latin-1"))
        name = ALIASES.get(name, name)
        option = OPTIONS.get(name)
        if option is None:
            raise unknown_config(given)
        if not option.mutable:
            raise config_set_failed(given, errors.CONFIG_IMMUTABLE)
        if shown[-1] in shown[:-1]:  # an old name and its new one may both be given
            raise config_set_failed(given, errors.CONFIG_DUPLICATE)
        names.append(name)
    values = []
    for name, quoted, (_, text) in zip(names, shown, pairs):  # every value, before any is applied
        try:
            value = text.decode("utf-8", "surrogateescape")
            OPTIONS[name].parse(value)
            if name == "dir" and not os.path.isdir(value):
                raise ConfigError(errors.CONFIG_NO_SUCH_DIR)
        except ConfigError as exc:
            raise config_set_failed(quoted, str(exc).encode()) from None
        values.append(value)
    # As Redis: every value set, then each applied; when one cannot be applied,
    # every value goes back and what was applied before it is applied again.
    previous = [ctx.config.show(name) for name in names]
    for name, value in zip(names, values):
        ctx.config.set(name, value)
    applied: list[str] = []
    try:
        for name in names:
            _apply_config(ctx, name)
            applied.append(name)
    except CommandError:
        for name, value in zip(names, previous):
            try:
                ctx.config.set(name, value)
            except ConfigError as exc:  # a value shown that does not read back: a bug
                log.warning("Failed restoring %s after CONFIG SET: %s", name, exc)
        for name in applied:
            try:
                _apply_config(ctx, name)
            except CommandError as exc:
                log.warning("Failed applying restored CONFIG SET of %s: %s", name, exc)
        raise
    return OK


@command("config|resetstat", arity=2, flags="admin noscript loading stale", group="server",
         since="2.0.0", complexity="O(1)", summary="Reset the stats returned by INFO")
def config_resetstat(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG RESETSTAT"""
    ctx.engine.reset_stats()
    return OK


# Options Redis writes as quoted strings (its string-typed options).
_STRING_OPTIONS = frozenset({"unixsocket", "dir", "logfile", "pidfile", "appenddirname",
                             "appendfilename", "dbfilename", "aclfile",
                             "syslog-ident", "proc-title-template", "locale-collate",
                             "ignore-warnings", "bind-source-addr", "tls-dh-params-file",
                             "tls-ciphersuites", "replica-announce-ip", "server-cpulist",
                             "bio-cpulist", "aof-rewrite-cpulist", "bgsave-cpulist",
                             "cluster-config-file", "cluster-announce-ip",
                             "cluster-announce-hostname", "cluster-announce-human-nodename"})


def _user_lines(ctx: Ctx) -> list[str]:
    """A ``user`` line per ACL user, sorted by name, as ACL LIST shows them."""
    acl = ctx.engine.acl
    return [(b"user %s %s" % (name, acl.users[name].describe())).decode("utf-8", "surrogateescape")
            for name in acl.names()]


def _config_line(name: str, shown: str) -> str:
    """One option's line as CONFIG REWRITE writes it: string options quoted
    (Redis's escaping), a multi-word option as its words (``save ""`` when
    it has none), anything else as it is shown."""
    if name in _STRING_OPTIONS:
        return f"{name} {repr_arg(shown.encode('utf-8', 'surrogateescape')).decode('ascii')}"
    if OPTIONS[name].multi_arg:
        return " ".join([name, *shown.split()]) if shown.split() else f'{name} ""'
    return " ".join([name, _quote(shown)])


def _quote(word: str) -> str:
    if word and not any(c in word for c in " \t\r\n\"'\\#"):
        return word
    return repr_arg(word.encode("utf-8", "surrogateescape")).decode("ascii")


def rewrite_config_text(ctx: Ctx, text: str) -> str:
    """The config file text with every option's current value, Redis's way:
    every line trimmed; an option already in the file is rewritten in place
    (its later lines blanked), an option not in the file is appended (after
    "# Generated by CONFIG REWRITE") only when it differs from its default;
    comments, blank lines and lines Tidelog does not know are kept.  The
    users are ``user`` lines, in place of those in the file, the others at
    the end (none when an aclfile holds them)."""
    config = ctx.config
    out: list[str] = []
    done: set[str] = set()
    users = [] if config["aclfile"] else _user_lines(ctx)
    # As Redis reads it: split at each newline (a final newline leaves an
    # empty last line), every line trimmed.
    for raw in text.split("\n") if text else []:
        line = raw.strip()
        if not line or line.startswith("#"):
            out.append(line)
            continue
        words = split_config_args(line)
        if not words:
            out.append(line)
            continue
        name = words[0].lower()
        name = ALIASES.get(name, name)  # an old name's line is rewritten under the new one
        if name == "user":
            out.append(users.pop(0) if users else "")
            continue
        if name not in OPTIONS:
            out.append(line)
            continue
        if name in done:  # a later line of an option written already: blanked
            out.append("")
            continue
        done.add(name)
        out.append(_config_line(name, config.show(name)))
    while len(out) >= 2 and out[-1] == out[-2] == "":  # trailing blank lines: one
        out.pop()
    appended = False
    for name, option in OPTIONS.items():
        if name in done:
            continue
        shown = config.show(name)
        if shown == option.show(option.parse(option.default)):
            continue
        if not appended:
            out.append("# Generated by CONFIG REWRITE")
            appended = True
        out.append(_config_line(name, shown))
    if users and not appended:
        out.append("# Generated by CONFIG REWRITE")
        appended = True
    out += users
    if not appended and out and out[-1] == "":  # nothing added: the file ends as it did
        out.pop()
    return "\n".join(out) + "\n"


@command("config|rewrite", arity=2, flags="admin noscript loading stale", group="server",
         since="2.8.0", complexity="O(1)",
         summary="Rewrite the configuration file with the in memory configuration")
def config_rewrite(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG REWRITE"""
    path = ctx.config.config_file
    if not path:
        raise CommandError(NO_CONFIG_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise errors.config_rewrite_failed(str(exc.strerror)) from None
    new_text = rewrite_config_text(ctx, text)
    directory = os.path.dirname(os.path.abspath(path))
    import tempfile  # here, not at start-up: only CONFIG REWRITE writes a file

    try:  # write a sibling file and rename it over the old one: never half a file
        fd, tmp = tempfile.mkstemp(prefix=".tidelog-config-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(new_text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("CONFIG REWRITE failed: %s", exc)
        raise errors.config_rewrite_failed(str(exc.strerror)) from None
    log.info("CONFIG REWRITE executed with success.")
    return OK


help_command("config", group="server", since="5.0.0",
             summary="Show helpful text about the different subcommands")
