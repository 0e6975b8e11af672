"""ACL rules and selectors: the categories, what a check answers, rule
errors, the command table and channels as ACL sees them, and
:class:`Selector` -- one set of permissions (commands, key patterns, channel
patterns).

Commands are kept as a baseline and its exceptions: ``+@all`` starts from
"everything, the commands added later included", ``-@all`` from nothing;
the names that differ from the baseline are in ``exceptions``.  The command
rules are also kept as written (lowercased, a rule re-applied moves to the
end, ``+get`` replaces ``-get``) because ``ACL LIST`` shows them that way
since Redis 7.2.  Applying a category rule is O(commands in the table)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ..commands.key_specs import KEY_READ, KEY_WRITE
from ..commands.table import COMMANDS, CommandSpec
from ..errors import (
    ACL_RULE_CHANNELS_AFTER_ALL,
    ACL_RULE_KEYS_AFTER_ALL,
    ACL_RULE_SUBCOMMAND_FIRSTARG,
    ACL_RULE_SYNTAX,
    ACL_RULE_UNKNOWN,
)
from ..glob import glob_match

# ACL CAT's categories, in Redis's order.
CATEGORIES = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
    "dangerous", "connection", "transaction", "scripting", "array",
)

# What a check answers (Redis's order matters: of several selectors' denials
# the highest is reported).
ACL_OK, DENIED_CMD, DENIED_KEY, DENIED_AUTH, DENIED_CHANNEL = 0, 1, 2, 3, 4

# ACL LOG: the reasons and contexts as shown, entries grouped within 60 s.
REASONS = {DENIED_CMD: b"command", DENIED_KEY: b"key", DENIED_CHANNEL: b"channel",
           DENIED_AUTH: b"auth"}
LOG_GROUPING_MS = 60_000
# How many of the newest entries a new one is compared with for grouping.
LOG_GROUPING_SCAN = 10

# ACL GENPASS's largest size.
GENPASS_MAX_BITS = 4096

class RuleError(Exception):
    """An ACL rule that cannot be applied; ``reason`` is one of the
    ``errors.ACL_RULE_*`` texts."""

    def __init__(self, reason: bytes) -> None:
        super().__init__(reason)
        self.reason = reason


def hash_password(password: bytes) -> bytes:
    """The hex SHA-256 a password is kept as (``#<hash>`` in rules)."""
    return hashlib.sha256(password).hexdigest().encode()


def has_spaces(text: bytes) -> bool:
    """Spaces or NUL bytes: not allowed in user names and patterns (so that
    rules read back the way they were written)."""
    return any(c in b" \t\n\r\x0b\x0c\x00" for c in text)


# -- the command table as ACL sees it -----------------------------------------------
def lookup(name: str) -> CommandSpec | None:
    """A command by the name a rule gives (``get``, ``config|get``): the
    container's subcommand only for ``container|sub``; any case."""
    parent, bar, sub = name.lower().partition("|")
    spec = COMMANDS.get(parent)
    if spec is None or not bar:
        return spec
    if "|" in sub:
        return None
    return spec.subcommands.get(sub)


def categories_of(spec: CommandSpec) -> frozenset[str]:
    """A command's ACL categories, without the ``@``; a container has only
    ``slow``, as in Redis."""
    if spec.handler is None and spec.subcommands:
        return frozenset({"slow"})
    return frozenset(c[1:] for c in spec.acl_categories())


def all_specs() -> Iterable[CommandSpec]:
    """Every command, each container followed by its subcommands."""
    for spec in COMMANDS.values():
        yield spec
        yield from spec.subcommands.values()


# -- channels --------------------------------------------------------------------------
# Commands that name channels ACL checks: (first argument, is a pattern).
# Unsubscribing is never refused.
_CHANNEL_COMMANDS = {"publish": (1, False), "spublish": (1, False), "subscribe": (0, False),
                     "ssubscribe": (0, False), "psubscribe": (0, True)}


def channel_args(spec: CommandSpec, argv: list[bytes]) -> list[tuple[int, bool]]:
    """``(argv index, is a pattern)`` of the channels a command names."""
    where = _CHANNEL_COMMANDS.get(spec.name)
    if where is None:
        return []
    count, pattern = where
    last = 2 if count else len(argv)
    return [(i, pattern) for i in range(1, min(last, len(argv)))]


# -- selectors -----------------------------------------------------------------------
class Selector:
    """One set of permissions: commands, key patterns, channel patterns."""

    __slots__ = ("future", "exceptions", "allcommands", "firstargs", "rules", "patterns",
                 "allkeys", "channels", "allchannels")

    def __init__(self, allchannels: bool) -> None:
        self.future = False             # the baseline: everything (+@all) or nothing (-@all)
        self.exceptions: set[str] = set()  # command names allowed/denied against the baseline
        self.allcommands = False        # +@all and nothing taken away since
        self.firstargs: dict[str, list[bytes]] = {}  # +select|0: allowed first arguments
        self.rules: list[bytes] = []    # the command rules as written, lowercased
        self.patterns: list[list[Any]] = []  # [pattern, KEY_READ | KEY_WRITE], in order
        self.allkeys = False
        self.channels: list[bytes] = []
        self.allchannels = allchannels

    def copy(self) -> Selector:
        other = Selector(self.allchannels)
        other.future, other.allcommands, other.allkeys = self.future, self.allcommands, self.allkeys
        other.exceptions = set(self.exceptions)
        other.firstargs = {name: list(args) for name, args in self.firstargs.items()}
        other.rules = list(self.rules)
        other.patterns = [list(p) for p in self.patterns]
        other.channels = list(self.channels)
        return other

    # -- commands ---------------------------------------------------------------------
    def allows(self, name: str) -> bool:
        """The command's own permission (first arguments aside).  O(1)."""
        return (name in self.exceptions) != self.future

    def _set(self, name: str, allow: bool) -> None:
        if allow == self.future:
            self.exceptions.discard(name)
        else:
            self.exceptions.add(name)
        if not allow:
            self.allcommands = False

    def _change(self, spec: CommandSpec, allow: bool) -> None:
        """Allow or deny a command; a container's subcommands with it."""
        self._set(spec.name, allow)
        self.firstargs.pop(spec.name, None)
        for sub in spec.subcommands.values():
            self._set(sub.name, allow)

    def _all(self, allow: bool) -> None:
        self.future = self.allcommands = allow
        self.exceptions.clear()
        self.firstargs.clear()
        self.rules.clear()

    def _rule(self, rule: bytes, allow: bool) -> None:
        """Keep the rule as written: the earlier rules for the same command
        (or its subcommands) or category go, this one is appended."""
        rule = rule.lower()
        prefix = rule + b"|"
        self.rules = [r for r in self.rules if r[1:] != rule and not r[1:].startswith(prefix)]
        self.rules.append((b"+" if allow else b"-") + rule)

    def _category(self, name: bytes, allow: bool) -> None:
        category = name.decode("latin-1").lower()
        if category not in CATEGORIES:
            raise RuleError(ACL_RULE_UNKNOWN)
        self._rule(b"@" + name, allow)
        for spec in COMMANDS.values():
            if category in categories_of(spec):
                self._change(spec, allow)
            for sub in spec.subcommands.values():
                if category in categories_of(sub):
                    self._change(sub, allow)

    def _command(self, op: bytes) -> None:
        """``+cmd``, ``-cmd``, ``+cmd|sub``, ``-cmd|sub``, ``+cmd|first-arg``."""
        allow = op[:1] == b"+"
        name = op[1:].decode("latin-1")
        if not allow or "|" not in name:
            spec = lookup(name)
            if spec is None:
                raise RuleError(ACL_RULE_UNKNOWN)
            self._change(spec, allow)
            self._rule(spec.name.encode(), allow)
            return
        base_name, _, first = name.rpartition("|")
        base = lookup(base_name)
        if base is None:
            raise RuleError(ACL_RULE_UNKNOWN)
        if "|" in base.name:
            raise RuleError(ACL_RULE_SUBCOMMAND_FIRSTARG)
        if not first:
            raise RuleError(ACL_RULE_SYNTAX)
        if base.subcommands:
            sub = lookup(name)
            if sub is None:
                raise RuleError(ACL_RULE_UNKNOWN)
            self._change(sub, True)
        else:  # SELECT|0: one first argument of an otherwise denied command
            allowed = self.firstargs.setdefault(base.name, [])
            if first.lower() not in (a.decode("latin-1").lower() for a in allowed):
                allowed.append(first.encode("latin-1"))
        self._rule(op[1:], True)

    # -- rules ------------------------------------------------------------------------
    def apply(self, op: bytes) -> None:
        """One selector rule (keys, channels, commands); raises RuleError."""
        word = op.lower()
        if word in (b"allkeys", b"~*"):
            self.allkeys = True
            self.patterns.clear()
        elif word == b"resetkeys":
            self.allkeys = False
            self.patterns.clear()
        elif word in (b"allchannels", b"&*"):
            self.allchannels = True
            self.channels.clear()
        elif word == b"resetchannels":
            self.allchannels = False
            self.channels.clear()
        elif word in (b"allcommands", b"+@all"):
            self._all(True)
        elif word in (b"nocommands", b"-@all"):
            self._all(False)
        elif op[:1] in (b"~", b"%"):
            self._key_pattern(op)
        elif op[:1] == b"&":
            if self.allchannels:
                raise RuleError(ACL_RULE_CHANNELS_AFTER_ALL)
            pattern = op[1:]
            if has_spaces(pattern):
                raise RuleError(ACL_RULE_SYNTAX)
            if pattern not in self.channels:
                self.channels.append(pattern)
            self.allchannels = False
        elif op[:2] in (b"+@", b"-@"):
            self._category(op[2:], op[:1] == b"+")
        elif op[:1] in (b"+", b"-"):
            self._command(op)
        else:
            raise RuleError(ACL_RULE_SYNTAX)

    def _key_pattern(self, op: bytes) -> None:
        """``~pattern`` (read and write), ``%R~``, ``%W~``, ``%RW~``."""
        if self.allkeys:
            raise RuleError(ACL_RULE_KEYS_AFTER_ALL)
        perm, at = KEY_READ | KEY_WRITE, 1
        if op[:1] == b"%":
            perm = 0
            while at < len(op):
                c = op[at:at + 1].upper()
                if c == b"R" and not perm & KEY_READ:
                    perm |= KEY_READ
                elif c == b"W" and not perm & KEY_WRITE:
                    perm |= KEY_WRITE
                elif c == b"~" and perm:
                    at += 1
                    break
                else:
                    raise RuleError(ACL_RULE_SYNTAX)
                at += 1
            if not perm:
                raise RuleError(ACL_RULE_SYNTAX)
        pattern = op[at:]
        if has_spaces(pattern):
            raise RuleError(ACL_RULE_SYNTAX)
        for existing in self.patterns:
            if existing[0] == pattern:
                existing[1] |= perm
                break
        else:
            self.patterns.append([pattern, perm])
        self.allkeys = False

    # -- describing -------------------------------------------------------------------
    def describe_commands(self) -> bytes:
        """The command rules as ACL LIST shows them: ``+@all`` or ``-@all``,
        then the rules in the order written."""
        return b" ".join([b"+@all" if self.future else b"-@all", *self.rules])

    def describe_keys(self) -> bytes:
        if self.allkeys:
            return b"~*"
        return b" ".join(_pattern_text(p, perm) for p, perm in self.patterns)

    def describe_channels(self) -> bytes:
        if self.allchannels:
            return b"&*"
        return b" ".join(b"&" + c for c in self.channels)

    def describe(self) -> bytes:
        """Keys, channels and commands, as a user line shows a selector."""
        parts = []
        if self.allkeys:
            parts.append(b"~*")
        else:
            parts += [_pattern_text(p, perm) for p, perm in self.patterns]
        if self.allchannels:
            parts.append(b"&*")
        else:
            parts.append(b"resetchannels")
            parts += [b"&" + c for c in self.channels]
        parts.append(self.describe_commands())
        return b" ".join(parts)

    # -- checking ---------------------------------------------------------------------
    def check(self, spec: CommandSpec, argv: list[bytes],
              keys: list[tuple[int, int]] | None) -> tuple[int, int]:
        """``(ACL_OK or the denial, argv index at fault)`` for a command:
        ``keys`` are its :func:`acl_keys` (found once for every selector)."""
        if not self.allcommands and "no_auth" not in spec.flags and not self.allows(spec.name):
            allowed = self.firstargs.get(spec.name)
            at = 2 if "|" in spec.name else 1
            if not allowed or len(argv) <= at:
                return DENIED_CMD, 0
            first = argv[at].lower()
            if not any(a.lower() == first for a in allowed):
                return DENIED_CMD, 0
        if not self.allkeys and keys:
            for i, perm in keys:
                if not self.key_allowed(argv[i], perm):
                    return DENIED_KEY, i
        if not self.allchannels:
            for i, pattern in channel_args(spec, argv):
                if not self.channel_allowed(argv[i], pattern):
                    return DENIED_CHANNEL, i
        return ACL_OK, 0

    def key_allowed(self, key: bytes, perm: int) -> bool:
        """May this selector read (KEY_READ) and/or write (KEY_WRITE) the key?"""
        if self.allkeys:
            return True
        for pattern, have in self.patterns:
            if have & perm == perm and glob_match(pattern, key):
                return True
        return False

    def channel_allowed(self, channel: bytes, is_pattern: bool) -> bool:
        """A channel matches the patterns; a PSUBSCRIBE pattern must be one of
        them, literally."""
        if self.allchannels:
            return True
        if is_pattern:
            return channel in self.channels
        return any(glob_match(p, channel) for p in self.channels)

    def full_key_access(self, perm: int) -> bool:
        """Every key, for this permission (``allkeys``, or a ``*`` pattern):
        what SORT's BY and GET need."""
        return self.allkeys or any(p == b"*" and have & perm == perm
                                   for p, have in self.patterns)


def _pattern_text(pattern: bytes, perm: int) -> bytes:
    prefix = {KEY_READ | KEY_WRITE: b"~", KEY_READ: b"%R~", KEY_WRITE: b"%W~"}.get(perm, b"~")
    return prefix + pattern
