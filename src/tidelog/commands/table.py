"""The command table: every command's name, arity, flags and key positions.

Handlers register themselves with :func:`command`::

    @command("xlen", arity=2, flags="readonly fast", keys=(1, 1, 1),
             group="stream", since="5.0.0", complexity="O(1)",
             summary="Return the number of entries in a stream.")
    def xlen(ctx: Ctx, argv: list[bytes]) -> Reply:
        '''XLEN key'''

Arity follows Redis: a positive number is the exact argument count including
the command name, a negative one the minimum.  The engine checks arity and
unknown names centrally, so handlers never do.  ``COMMAND INFO/DOCS/LIST``
and ``COMMAND COUNT`` are produced from this table.

A container command (``XGROUP``, ``CLIENT``, ``CONFIG``...) registers with
``container=True``; its subcommands register as ``"xgroup|create"`` and are
dispatched by the engine on the second argument, as in Redis 7.  Its HELP
text is on its spec too (``help=(...)``, one string per reply line), and
``replies.help_command`` registers the ``X HELP`` subcommand that answers it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .contract import Ctx

Handler = Callable[[Ctx, list[bytes]], Any]
# A command's own key finder (Redis's getkeys_proc): argv -> key positions.
KeyFinder = Callable[[list[bytes]], list[int]]
# A run handler: consecutive calls of one command on one key, one reply (or
# CommandError) per call, in order.
RunHandler = Callable[[Ctx, list[list[bytes]]], list[Any]]


# ACL categories derived from flags and group, as Redis shows them in COMMAND INFO.
_GROUP_CATEGORY = {
    "stream": "@stream", "string": "@string", "hash": "@hash", "list": "@list",
    "generic": "@keyspace",
    "connection": "@connection", "server": "@admin", "transactions": "@transaction",
    "set": "@set", "sorted_set": "@sortedset", "pubsub": "@pubsub",
    "scripting": "@scripting",
    "bitmap": "@bitmap", "geo": "@geo", "hyperloglog": "@hyperloglog", "array": "@array",
}


@dataclass(frozen=True)
class KeySpec:
    """One key spec as COMMAND INFO shows it (Redis 7's ``key_specs``)."""

    flags: tuple[str, ...]
    begin: int | str | None     # None: unknown; an index, or the keyword keys follow (XREAD's STREAMS)
    lastkey: int = 0
    keystep: int = 1
    limit: int = 0
    startfrom: int = 1          # for a keyword begin: where to start looking for it
    notes: str | None = None
    # find_keys "keynum" instead of "range": (keynumidx, firstkey, keystep),
    # offsets from begin (SINTERCARD numkeys key [key ...]).
    keynum: tuple[int, int, int] | None = None
    # begin None: Redis's "unknown" begin_search and find_keys (SORT's BY/GET
    # and STORE); ``find(argv)`` then gives the key positions, if any.
    find: Any = None


@dataclass
class CommandSpec:
    name: str                      # lower case; "container|sub" for subcommands
    handler: Handler | None
    arity: int
    flags: frozenset[str]
    first_key: int = 0
    last_key: int = 0
    key_step: int = 0
    group: str = "generic"
    since: str = "1.0.0"
    complexity: str = ""
    summary: str = ""
    categories: tuple[str, ...] = ()
    subcommands: dict[str, CommandSpec] = field(default_factory=dict)
    run: Run | None = None         # see :func:`runs`
    tips: tuple[str, ...] = ()     # COMMAND INFO's tips
    key_specs: list[KeySpec] | None = None  # None: derived from the flags (key_specs.key_specs)
    key_finder: KeyFinder | None = None     # finds the keys where the key specs give too many
    help: tuple[str, ...] = ()     # a container's HELP reply, one status line per string
    doc_flags: tuple[str, ...] = ()  # COMMAND DOCS' doc_flags ("syscmd": not for users)

    @property
    def is_write(self) -> bool:
        return "write" in self.flags

    def acl_categories(self) -> list[str]:
        cats = []
        if "write" in self.flags:
            cats.append("@write")
        if "readonly" in self.flags:
            cats.append("@read")
        group_cat = _GROUP_CATEGORY.get(self.group)
        if group_cat and group_cat != "@admin":
            cats.append(group_cat)
        if "admin" in self.flags:
            cats += ["@admin", "@dangerous"]
        if "fast" in self.flags:
            cats.append("@fast")
        else:
            cats.append("@slow")
        if "blocking" in self.flags:
            cats.append("@blocking")
        for cat in self.categories:  # "-@keyspace": not the group's category (SORT)
            if cat.startswith("-"):
                cats.remove(cat[1:])
            else:
                cats.append(cat)
        return cats


@dataclass(frozen=True)
class Run:
    """How pipelined calls of one command on one key run as one call.

    ``key_of(argv)`` is the key when argv has the form the run handler
    takes (checked in O(1)), else None; ``handler(ctx, run)`` runs the
    calls in order and answers one reply, or the :class:`CommandError`
    the call alone would have raised, per call."""

    key_of: Callable[[list[bytes]], bytes | None]
    handler: RunHandler


COMMANDS: dict[str, CommandSpec] = {}


def command(name: str, *, arity: int, flags: str = "", keys: tuple[int, int, int] = (0, 0, 0),
            group: str = "generic", since: str = "1.0.0", complexity: str = "",
            summary: str = "", categories: tuple[str, ...] = (),
            container: bool = False, tips: tuple[str, ...] = (),
            key_specs: list[KeySpec] | None = None,
            key_finder: KeyFinder | None = None,
            help: tuple[str, ...] = (),
            doc_flags: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
    """Register a handler (or, with container=True, a container command).

    ``tips`` and ``key_specs`` are what COMMAND INFO shows (written from what
    redis-server 7.0.15 answers, and from Redis 8's command pages for the
    newer commands); a command without key specs gets one derived from its
    flags and ``keys``.  ``key_finder`` finds the keys of a call where the
    key specs alone would give too many (MIGRATE).  ``help`` is the HELP
    reply of a container (or of DEBUG), one line per string.  ``doc_flags``:
    what COMMAND DOCS lists as such (``syscmd`` for internal commands)."""

    def register(handler: Handler) -> Handler:
        spec = CommandSpec(
            name=name, handler=None if container else handler, arity=arity,
            flags=frozenset(flags.split()), first_key=keys[0], last_key=keys[1],
            key_step=keys[2], group=group, since=since, complexity=complexity,
            summary=summary or (handler.__doc__ or "").strip().splitlines()[0],
            categories=categories, tips=tips, key_specs=key_specs, key_finder=key_finder,
            help=help, doc_flags=doc_flags,
        )
        parent_name, bar, sub = name.partition("|")
        if bar:
            parent = COMMANDS[parent_name]
            parent.subcommands[sub] = spec
        else:
            if name in COMMANDS:
                raise ValueError(f"command {name} registered twice")
            COMMANDS[name] = spec
        return handler

    return register


def runs(name: str, key_of: Callable[[list[bytes]], bytes | None]) -> Callable[[RunHandler], RunHandler]:
    """Register the run handler of command ``name`` (registered before):
    the engine may hand it consecutive pipelined calls that ``key_of`` gives
    one key for, instead of calling the handler once per call.  It must
    leave the data, the replies and the effects exactly as the calls one by
    one would."""

    def register(handler: RunHandler) -> RunHandler:
        COMMANDS[name].run = Run(key_of, handler)
        return handler

    return register


def lookup(argv: list[bytes]) -> CommandSpec | None:
    """The spec for argv (the container's, when the subcommand is unknown)."""
    spec = COMMANDS.get(argv[0].decode("latin-1").lower())
    if spec is not None and spec.subcommands and len(argv) > 1:
        sub = spec.subcommands.get(argv[1].decode("latin-1").lower())
        if sub is not None:
            return sub
    return spec
