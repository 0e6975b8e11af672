"""ACL users: flags (``on``/``off``, ``nopass``, ``sanitize-payload`` or
``skip-sanitize-payload``), SHA-256 password hashes, and one or more
:class:`~tidelog.acl.selectors.Selector`: the *root* selector (the rules
written outside parentheses) and the ones written as ``(...)``.  A command
is allowed when any one selector allows all of it: the command, every key,
every channel.

Checking a command is O(selectors x (keys x patterns + channels x
patterns)) glob matches, and only for clients whose user is restricted
(the engine sends the others down its unchecked fast path)."""

from __future__ import annotations

import hmac
import secrets

from ..commands.key_specs import acl_keys
from ..commands.table import CommandSpec
from ..errors import ACL_RULE_BAD_HASH, ACL_RULE_NO_SUCH_PASSWORD
from .selectors import ACL_OK, DENIED_CMD, DENIED_KEY, RuleError, Selector, hash_password


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
