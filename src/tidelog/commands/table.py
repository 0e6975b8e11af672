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
dispatched by the engine on the second argument, as in Redis 7.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .contract import Ctx

Handler = Callable[[Ctx, list[bytes]], Any]
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
            container: bool = False) -> Callable[[Handler], Handler]:
    """Register a handler (or, with container=True, a container command)."""

    def register(handler: Handler) -> Handler:
        spec = CommandSpec(
            name=name, handler=None if container else handler, arity=arity,
            flags=frozenset(flags.split()), first_key=keys[0], last_key=keys[1],
            key_step=keys[2], group=group, since=since, complexity=complexity,
            summary=summary or (handler.__doc__ or "").strip().splitlines()[0],
            categories=categories,
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
