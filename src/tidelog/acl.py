"""ACL users: who may connect, and which commands, keys and channels each may use.

The model is Redis's (6.0's users, 7.0's selectors and read/write key
patterns, 7.2's ordered command rules), with Redis 8's texts:

* A :class:`User` has flags (``on``/``off``, ``nopass``, ``sanitize-payload``
  or ``skip-sanitize-payload``), SHA-256 password hashes, and one or more
  :class:`Selector`: the *root* selector (the rules written outside
  parentheses) and the ones written as ``(...)``.  A command is allowed when
  any one selector allows all of it: the command, every key, every channel.
* A selector holds which commands it allows, the key patterns (each for
  reading, writing or both: ``%R~``, ``%W~``, ``~``) or ``allkeys``, and the
  channel patterns or ``allchannels``.  Commands are kept as a baseline and
  its exceptions: ``+@all`` starts from "everything, the commands added later
  included", ``-@all`` from nothing; the names that differ from the baseline
  are in ``exceptions``.  The command rules are also kept as written
  (lowercased, a rule re-applied moves to the end, ``+get`` replaces ``-get``)
  because ``ACL LIST`` shows them that way since Redis 7.2.
* :class:`Acl` holds the users by name (listed sorted, as Redis's radix tree
  lists them), the ``ACL LOG`` and its counters, and loads and saves the
  ACL file.

Costs: checking a command is O(selectors x (keys x patterns + channels x
patterns)) glob matches, and only for clients whose user is restricted
(the engine sends the others down its unchecked fast path).  Applying a
category rule is O(commands in the table).

Nothing here knows clients or sockets: the engine asks :meth:`User.check`
before it runs a command; the ACL commands tell it which users changed or
went (``Engine.users_changed``), so it can re-check or close their clients.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .commands.key_specs import KEY_READ, KEY_WRITE, acl_keys
from .commands.table import COMMANDS, CommandSpec
from .errors import (
    ACL_RULE_BAD_HASH,
    ACL_RULE_CHANNELS_AFTER_ALL,
    ACL_RULE_DUPLICATE_USER,
    ACL_RULE_KEYS_AFTER_ALL,
    ACL_RULE_NO_SUCH_PASSWORD,
    ACL_RULE_SUBCOMMAND_FIRSTARG,
    ACL_RULE_SYNTAX,
    ACL_RULE_UNKNOWN,
    CommandError,
    acl_setuser_error,
    acl_unmatched_parenthesis,
)
from .glob import glob_match

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


# -- users ---------------------------------------------------------------------------
class User:
    """An ACL user: flags, password hashes, selectors (the root one first)."""

    __slots__ = ("name", "enabled", "nopass", "sanitize", "passwords", "selectors")

    def __init__(self, name: bytes, allchannels: bool = False) -> None:
        self.name = name
        self.enabled = False
        self.nopass = False
        self.sanitize = b"sanitize-payload"   # or b"skip-sanitize-payload"
        self.passwords: list[bytes] = []      # hex SHA-256, in the order added
        self.selectors = [Selector(allchannels)]

    @property
    def root(self) -> Selector:
        return self.selectors[0]

    @property
    def unrestricted(self) -> bool:
        """Allowed every command, key and channel (the root selector says so):
        its clients need no check at all."""
        root = self.selectors[0]
        return root.allcommands and root.allkeys and root.allchannels

    def copy(self, name: bytes | None = None) -> User:
        other = User(self.name if name is None else name)
        other.enabled, other.nopass, other.sanitize = self.enabled, self.nopass, self.sanitize
        other.passwords = list(self.passwords)
        other.selectors = [s.copy() for s in self.selectors]
        return other

    def take(self, other: User) -> None:
        """Become ``other`` (its rules, not its name): clients holding this
        user see the change at once."""
        self.enabled, self.nopass, self.sanitize = other.enabled, other.nopass, other.sanitize
        self.passwords = other.passwords
        self.selectors = other.selectors

    def apply(self, op: bytes, allchannels_default: bool) -> None:
        """One rule of ACL SETUSER (user flags, passwords, selectors, or a rule
        for the root selector); raises RuleError."""
        if not op:
            return
        word = op.lower()
        if word == b"on":
            self.enabled = True
        elif word == b"off":
            self.enabled = False
        elif word == b"skip-sanitize-payload":
            self.sanitize = b"skip-sanitize-payload"
        elif word == b"sanitize-payload":
            self.sanitize = b"sanitize-payload"
        elif word == b"nopass":
            self.nopass = True
            self.passwords = []
        elif word == b"resetpass":
            self.nopass = False
            self.passwords = []
        elif op[:1] in (b">", b"#"):
            hashed = hash_password(op[1:]) if op[:1] == b">" else _valid_hash(op[1:])
            if hashed not in self.passwords:
                self.passwords.append(hashed)
            self.nopass = False
        elif op[:1] in (b"<", b"!"):
            hashed = hash_password(op[1:]) if op[:1] == b"<" else _valid_hash(op[1:])
            if hashed not in self.passwords:
                raise RuleError(ACL_RULE_NO_SUCH_PASSWORD)
            self.passwords.remove(hashed)
        elif op[:1] == b"(" and op[-1:] == b")":
            selector = Selector(allchannels_default)
            for rule in op[1:-1].split():
                selector.apply(rule)
            self.selectors.append(selector)
        elif word == b"clearselectors":
            del self.selectors[1:]
        elif word == b"reset":
            for rule in (b"resetpass", b"resetkeys", b"resetchannels"):
                self.apply(rule, allchannels_default)
            if allchannels_default:
                self.apply(b"allchannels", allchannels_default)
            for rule in (b"off", b"sanitize-payload", b"clearselectors", b"-@all"):
                self.apply(rule, allchannels_default)
        else:
            self.selectors[0].apply(op)

    def describe(self) -> bytes:
        """The user's rules as ACL LIST and the ACL file write them (without
        ``user <name>``)."""
        parts = [b"on" if self.enabled else b"off"]
        if self.nopass:
            parts.append(b"nopass")
        parts.append(self.sanitize)
        parts += [b"#" + p for p in self.passwords]
        parts.append(self.selectors[0].describe())
        parts += [b"(" + s.describe() + b")" for s in self.selectors[1:]]
        return b" ".join(parts)

    def flags(self) -> list[bytes]:
        """ACL GETUSER's flags, in Redis's order."""
        flags = [b"on" if self.enabled else b"off"]
        if self.nopass:
            flags.append(b"nopass")
        flags.append(self.sanitize)
        return flags

    def password_ok(self, password: bytes) -> bool:
        """May this password log in as this user (the user being on)?"""
        if not self.enabled:
            return False
        if self.nopass:
            return True
        hashed = hash_password(password)
        found = False
        for known in self.passwords:  # every hash compared, in constant time
            found |= hmac.compare_digest(known, hashed)
        return found

    def check(self, spec: CommandSpec, argv: list[bytes]) -> tuple[int, int]:
        """``(ACL_OK or the denial, argv index at fault)``: allowed when one
        selector allows everything; otherwise the denial Redis reports (the
        highest reason, the last position for it)."""
        keys = acl_keys(spec, argv) if any(not s.allkeys for s in self.selectors) else None
        worst, at = DENIED_CMD, 0
        for selector in self.selectors:
            result, index = selector.check(spec, argv, keys)
            if result == ACL_OK:
                return ACL_OK, 0
            if result > worst or (result == worst and index > at):
                worst, at = result, index
        return worst, at

    def channel_allowed(self, channel: bytes, is_pattern: bool) -> bool:
        return any(s.channel_allowed(channel, is_pattern) for s in self.selectors)

    def full_key_access(self, spec: CommandSpec, argv: list[bytes], perm: int) -> bool:
        """Does a selector that allows this command also allow every key?"""
        keys = acl_keys(spec, argv)
        return any(s.check(spec, argv, keys)[0] == ACL_OK and s.full_key_access(perm)
                   for s in self.selectors)


def _valid_hash(text: bytes) -> bytes:
    if len(text) != 64 or any(c not in b"0123456789abcdef" for c in text):
        raise RuleError(ACL_RULE_BAD_HASH)
    return text


def merge_selectors(args: list[bytes]) -> list[bytes] | int:
    """Rules with a selector spread over several arguments (``(+get``
    ``~k*)``) joined into one; the index of an unclosed ``(`` when one is."""
    merged: list[bytes] = []
    start = -1
    for i, arg in enumerate(args):
        if start < 0 and arg[:1] == b"(" and arg[-1:] != b")":
            start, current = i, arg
            continue
        if start >= 0:
            current += b" " + arg
            if arg[-1:] == b")":
                merged.append(current)
                start = -1
            continue
        merged.append(arg)
    return start if start >= 0 else merged


def default_user(allchannels: bool = False) -> User:
    """The ``default`` user as a server starts with it: on, no password,
    every command, key and channel."""
    user = User(b"default", allchannels)
    for rule in (b"+@all", b"~*", b"&*", b"on", b"nopass"):
        user.apply(rule, allchannels)
    return user


# -- the ACL LOG ---------------------------------------------------------------------
@dataclass
class LogEntry:
    """One ACL LOG entry: denials of the same kind by the same user on the
    same object within a minute count in one entry."""

    reason: int
    context: bytes           # toplevel, multi, lua
    object: bytes            # the command, key, channel, or AUTH's command name
    username: bytes
    client_info: bytes
    entry_id: int
    created_ms: int
    updated_ms: int
    count: int = 1

    def same(self, other: LogEntry) -> bool:
        return (self.reason == other.reason and self.context == other.context
                and abs(self.updated_ms - other.updated_ms) <= LOG_GROUPING_MS
                and self.object == other.object and self.username == other.username)


# -- the users -------------------------------------------------------------------------
@dataclass
class Acl:
    """Every user, and the ACL LOG."""

    allchannels_default: bool = False       # acl-pubsub-default allchannels
    log_max: int = 128                      # acllog-max-len
    users: dict[bytes, User] = field(default_factory=dict)
    log: deque[Any] = field(default_factory=deque)
    log_entries_made: int = 0

    def __post_init__(self) -> None:
        if b"default" not in self.users:
            self.users[b"default"] = default_user(self.allchannels_default)

    @property
    def default(self) -> User:
        return self.users[b"default"]

    def auth_required(self) -> bool:
        """Must a new connection authenticate (the default user has a
        password, or is off)?"""
        default = self.default
        return not default.nopass or not default.enabled

    def names(self) -> list[bytes]:
        """The user names, sorted as Redis lists them."""
        return sorted(self.users)

    # -- changing users -----------------------------------------------------------------
    def set_user(self, name: bytes, rules: list[bytes]) -> User:
        """ACL SETUSER: apply every rule to a copy of the user (a new one if
        needed) and keep it only if all apply; raises CommandError.  The
        user object stays the same, so its clients see the change at once."""
        merged = merge_selectors(rules)
        if isinstance(merged, int):
            raise acl_unmatched_parenthesis(rules[merged])
        existing = self.users.get(name)
        staged = existing.copy() if existing is not None else User(name, self.allchannels_default)
        for rule in merged:
            try:
                staged.apply(rule, self.allchannels_default)
            except RuleError as exc:
                raise acl_setuser_error(rule, exc.reason) from None
        if existing is None:
            self.users[name] = staged
            return staged
        existing.take(staged)
        return existing

    def delete_users(self, names: list[bytes]) -> list[User]:
        """ACL DELUSER (the default user is refused by the caller): the users
        that existed."""
        return [user for name in names if (user := self.users.pop(name, None)) is not None]

    def set_default_password(self, password: bytes) -> None:
        """``requirepass``: the default user's only password ("": nopass)."""
        default = self.default
        default.apply(b"resetpass", self.allchannels_default)
        default.apply(b">" + password if password else b"nopass", self.allchannels_default)

    def load_config_users(self, lines: list[list[bytes]]) -> None:
        """The ``user`` lines of the configuration file, at start (each one
        ``[name, rule, ...]``); raises ValueError naming the first problem,
        in Redis's words."""
        seen: set[bytes] = set()
        for name, *rules in lines:
            if name in seen:
                raise ValueError(ACL_RULE_DUPLICATE_USER.decode())
            seen.add(name)
            if has_spaces(name):
                raise ValueError("Spaces not allowed in ACL usernames")
            merged = merge_selectors(rules)
            if isinstance(merged, int):
                raise ValueError(acl_unmatched_parenthesis(rules[merged]).message[4:].decode(
                    "utf-8", "replace"))
            user = self.users.get(name)
            if user is None:
                user = self.users[name] = User(name, self.allchannels_default)
            else:  # only the default user exists before: it starts over
                user.apply(b"reset", self.allchannels_default)
            for rule in merged:
                try:
                    user.apply(rule, self.allchannels_default)
                except RuleError as exc:
                    raise ValueError("Error loading ACL rule '%s' for the user named '%s': %s" % (
                        rule.decode("utf-8", "replace"), name.decode("utf-8", "replace"),
                        exc.reason.decode())) from None

    # -- the ACL file ---------------------------------------------------------------------
    def parse_file(self, text: bytes, filename: bytes) -> dict[bytes, User]:
        """The users an ACL file defines; raises CommandError with every
        problem found, in Redis's words (nothing is changed)."""
        users: dict[bytes, User] = {}
        errors: list[bytes] = []
        for number, line in enumerate(text.split(b"\n"), 1):
            line = line.strip(b" \t\r\n")
            if not line:
                continue
            argv = line.split(b" ")
            if argv[0] != b"user" or len(argv) < 2:
                errors.append(b"%s:%d should start with user keyword followed by the "
                              b"username. " % (filename, number))
                continue
            name = argv[1]
            if has_spaces(name):
                errors.append(b"'%s:%d: username '%s' contains invalid characters. "
                              % (filename, number, name))
                continue
            if name in users:
                errors.append(b"WARNING: Duplicate user '%s' found on line %d. " % (name, number))
                continue
            user = users[name] = User(name, self.allchannels_default)
            merged = merge_selectors(argv[2:])
            if isinstance(merged, int):
                errors.append(b"%s:%d: Unmatched parenthesis in selector definition."
                              % (filename, number))
                continue
            syntax_error = False
            for rule in merged:
                rule = rule.strip(b"\t\r\n")
                try:
                    user.apply(rule, self.allchannels_default)
                except RuleError as exc:
                    if exc.reason == ACL_RULE_UNKNOWN:
                        errors.append(b"%s:%d: Error in applying operation '%s': %s. "
                                      % (filename, number, rule, exc.reason))
                    elif not syntax_error:
                        errors.append(b"%s:%d: %s. " % (filename, number, exc.reason))
                        syntax_error = True
        if errors:
            raise CommandError(b"ERR " + b"".join(errors) + b"WARNING: ACL errors detected, no "
                               b"change to the previously active ACL rules was performed")
        return users

    def replace_users(self, users: dict[bytes, User]) -> tuple[list[User], list[User]]:
        """ACL LOAD (and the file at start): these users and no others;
        without a default user in the file the default user starts as new.
        A user kept is the same object with the new rules, so its clients
        stay (Redis 7.2+).  Returns the users gone and the users kept."""
        users.setdefault(b"default", default_user(self.allchannels_default))
        gone = [self.users.pop(name) for name in list(self.users) if name not in users]
        kept = []
        for name, new in users.items():
            old = self.users.get(name)
            if old is None:
                self.users[name] = new
            else:
                old.take(new)
                kept.append(old)
        return gone, kept

    def file_text(self) -> bytes:
        """ACL SAVE's file: a ``user`` line per user."""
        return b"".join(b"user %s %s\n" % (name, self.users[name].describe())
                        for name in self.names())

    def save_file(self, path: str) -> None:
        """Write the ACL file atomically (a temporary file, fsync, rename,
        fsync of the directory); OSError when it cannot."""
        tmp = "%s.tmp-%d-%d" % (path, os.getpid(), secrets.randbits(32))
        try:
            with open(tmp, "wb") as f:
                f.write(self.file_text())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        directory = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    # -- the log -------------------------------------------------------------------------
    def add_log(self, reason: int, context: bytes, obj: bytes, username: bytes,
                client_info: bytes, now_ms: int) -> None:
        """Log a denial (grouped with a recent entry like it)."""
        entry = LogEntry(reason, context, obj, username, client_info, self.log_entries_made,
                         now_ms, now_ms)
        for i, old in enumerate(self.log):
            if i >= LOG_GROUPING_SCAN:
                break
            if old.same(entry):
                del self.log[i]
                old.count += 1
                old.client_info, old.updated_ms = client_info, now_ms
                self.log.appendleft(old)
                return
        self.log_entries_made += 1
        self.log.appendleft(entry)
        while len(self.log) > self.log_max:
            self.log.pop()


def genpass(bits: int) -> bytes:
    """ACL GENPASS: ``bits`` random bits as hex digits (rounded up)."""
    return secrets.token_hex((bits + 7) // 8)[:(bits + 3) // 4].encode()


def denial_message(result: int, user: User, spec: CommandSpec, arg: bytes,
                   verbose: bool) -> bytes:
    """Why a command was refused, in Redis 8's words (the -NOPERM text,
    ACL DRYRUN's answer)."""
    if result == DENIED_CMD:
        return b"User %s has no permissions to run the '%s' command" % (
            user.name, spec.name.encode())
    what = b"key" if result == DENIED_KEY else b"channel"
    if verbose:
        return b"User %s has no permissions to access the '%s' %s" % (user.name, arg, what)
    return b"No permissions to access a %s" % what
