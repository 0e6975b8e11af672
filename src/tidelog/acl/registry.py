"""The users by name (listed sorted, as Redis's radix tree lists them), the
``ACL LOG`` and its counters, and the ACL file (loaded, parsed, saved)."""

from __future__ import annotations

import os
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    ACL_RULE_DUPLICATE_USER,
    ACL_RULE_UNKNOWN,
    CommandError,
    acl_setuser_error,
    acl_unmatched_parenthesis,
)
from .selectors import LOG_GROUPING_MS, LOG_GROUPING_SCAN, RuleError, has_spaces
from .users import User, default_user, merge_selectors


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
