"""ACL and its subcommands: the users (SETUSER, GETUSER, DELUSER, LIST,
USERS, WHOAMI), what they may do (CAT, DRYRUN), the refusals (LOG), the ACL
file (LOAD, SAVE) and GENPASS.

The users and the rules are :mod:`tidelog.acl`; this module parses the
arguments, calls it, and tells the engine when users changed (their clients
may have to go, or be checked from now on: ``Engine.users_changed``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ...acl.selectors import (
    ACL_OK,
    CATEGORIES,
    GENPASS_MAX_BITS,
    REASONS,
    Selector,
    all_specs,
    categories_of,
    has_spaces,
)
from ...acl.users import denial_message, genpass
from ...errors import (
    ACL_DELETE_DEFAULT,
    ACL_GENPASS_BITS,
    ACL_NO_FILE,
    ACL_SAVE_FAILED,
    ACL_USERNAME_SPACES,
    CommandError,
    acl_no_such_command,
    acl_no_such_user,
    acl_unknown_category,
    subcommand_syntax,
    wrong_arity,
)
from ...resp.replies import OK, Map, SetReply
from ..args import parse_int
from ..replies import help_command
from ..table import command, lookup

if TYPE_CHECKING:
    from ..contract import Ctx

log = logging.getLogger("tidelog")


@command("acl", arity=-2, group="server", since="6.0.0", complexity="Depends on subcommand.",
         summary="A container for Access List Control commands ", container=True, help=(
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
))
def acl_(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL subcommand [argument ...]"""


# -- users -------------------------------------------------------------------------
@command("acl|setuser", arity=-3, flags="admin noscript loading stale", group="server",
         since="6.0.0", complexity="O(N). Where N is the number of rules provided.",
         summary="Modify or create the rules for a specific ACL user")
def acl_setuser(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL SETUSER username [rule [rule ...]]"""
    name = argv[2]
    if has_spaces(name):
        raise CommandError(ACL_USERNAME_SPACES)
    user = ctx.engine.acl.set_user(name, argv[3:])
    ctx.engine.users_changed(ctx.client, changed=[user])
    return OK


@command("acl|deluser", arity=-3, flags="admin noscript loading stale", group="server",
         since="6.0.0", complexity="O(1) amortized time considering the typical user.",
         summary="Remove the specified ACL users and the associated rules")
def acl_deluser(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL DELUSER username [username ...]"""
    names = argv[2:]
    if b"default" in names:
        raise CommandError(ACL_DELETE_DEFAULT)
    deleted = ctx.engine.acl.delete_users(names)
    ctx.engine.users_changed(ctx.client, deleted=deleted)
    return len(deleted)


def _selector_fields(selector: Selector) -> list[tuple[bytes, bytes]]:
    return [(b"commands", selector.describe_commands()), (b"keys", selector.describe_keys()),
            (b"channels", selector.describe_channels())]


@command("acl|getuser", arity=3, flags="admin noscript loading stale", group="server",
         since="6.0.0",
         complexity="O(N). Where N is the number of password, command and pattern rules that "
                    "the user has.",
         summary="Get the rules for a specific ACL user")
def acl_getuser(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL GETUSER username"""
    user = ctx.engine.acl.users.get(argv[2])
    if user is None:
        return None
    return Map([
        (b"flags", SetReply(user.flags())),
        (b"passwords", list(user.passwords)),
        *_selector_fields(user.root),
        (b"selectors", [Map(_selector_fields(s)) for s in user.selectors[1:]]),
    ])


@command("acl|list", arity=2, flags="admin noscript loading stale", group="server",
         since="6.0.0", complexity="O(N). Where N is the number of configured users.",
         summary="List the current ACL rules in ACL config file format")
def acl_list(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL LIST"""
    acl = ctx.engine.acl
    return [b"user %s %s" % (name, acl.users[name].describe()) for name in acl.names()]


@command("acl|users", arity=2, flags="admin noscript loading stale", group="server",
         since="6.0.0", complexity="O(N). Where N is the number of configured users.",
         summary="List the username of all the configured ACL rules")
def acl_users(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL USERS"""
    return ctx.engine.acl.names()


@command("acl|whoami", arity=2, flags="noscript loading stale", group="server", since="6.0.0",
         complexity="O(1)",
         summary="Return the name of the user associated to the current connection")
def acl_whoami(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL WHOAMI"""
    user = ctx.client.user
    return None if user is None else user.name


# -- what users may do -------------------------------------------------------------
@command("acl|cat", arity=-2, flags="noscript loading stale", group="server", since="6.0.0",
         complexity="O(1) since the categories and commands are a fixed set.",
         summary="List the ACL categories or the commands inside a category")
def acl_cat(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL CAT [category]"""
    if len(argv) > 3:
        raise subcommand_syntax(argv[1], argv[0])
    if len(argv) == 2:
        return [c.encode() for c in CATEGORIES]
    name = argv[2]
    category = name.decode("latin-1").lower()
    if category not in CATEGORIES:
        raise acl_unknown_category(name)
    return [spec.name.encode() for spec in all_specs() if category in categories_of(spec)]


@command("acl|dryrun", arity=-4, flags="admin noscript loading stale", group="server",
         since="7.0.0", complexity="O(1).",
         summary="Returns whether the user can execute the given command without executing "
                 "the command.")
def acl_dryrun(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL DRYRUN username command [arg [arg ...]]"""
    user = ctx.engine.acl.users.get(argv[2])
    if user is None:
        raise acl_no_such_user(argv[2])
    target = argv[3:]
    spec = lookup(target)
    if spec is None or (spec.subcommands and spec.handler is None and len(target) > 1):
        raise acl_no_such_command(argv[3])
    argc = len(target)
    if (spec.arity > 0 and argc != spec.arity) or argc < -spec.arity:
        raise wrong_arity(spec.name.encode())
    result, at = user.check(spec, target)
    if result != ACL_OK:
        return denial_message(result, user, spec, target[at], True)
    return OK


# -- the log -----------------------------------------------------------------------
_CONTEXTS = (b"toplevel", b"multi", b"lua")


@command("acl|log", arity=-2, flags="admin noscript loading stale", group="server",
         since="6.0.0", complexity="O(N) with N being the number of entries shown.",
         summary="List latest events denied because of ACLs in place")
def acl_log(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL LOG [count | RESET]"""
    acl = ctx.engine.acl
    if len(argv) > 3:
        raise subcommand_syntax(argv[1], argv[0])
    count = 10
    if len(argv) == 3:
        word = argv[2]
        if word.lower() == b"reset":
            acl.log.clear()
            return OK
        count = max(0, parse_int(word))
    now = ctx.engine.clock.now_ms()
    out = []
    for entry in list(acl.log)[:count]:
        out.append(Map([
            (b"count", entry.count),
            (b"reason", REASONS[entry.reason]),
            (b"context", entry.context),
            (b"object", entry.object),
            (b"username", entry.username),
            (b"age-seconds", (now - entry.updated_ms) / 1000),
            (b"client-info", entry.client_info),
            (b"entry-id", entry.entry_id),
            (b"timestamp-created", entry.created_ms),
            (b"timestamp-last-updated", entry.updated_ms),
        ]))
    return out


# -- the ACL file --------------------------------------------------------------------
def _acl_file(ctx: Ctx) -> str:
    """``aclfile``, or Redis's error when there is none."""
    path: str = ctx.config["aclfile"]
    if not path:
        raise CommandError(ACL_NO_FILE)
    return path


@command("acl|load", arity=2, flags="admin noscript loading stale", group="server",
         since="6.0.0", complexity="O(N). Where N is the number of configured users.",
         summary="Reload the ACLs from the configured ACL file")
def acl_load(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL LOAD"""
    path = _acl_file(ctx)
    acl = ctx.engine.acl
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as exc:
        raise CommandError(b"ERR Error loading ACLs, opening file '%s': %s" % (
            path.encode(), (exc.strerror or str(exc)).encode())) from None
    users = acl.parse_file(text, path.encode())
    deleted, kept = acl.replace_users(users)
    ctx.engine.users_changed(ctx.client, deleted=deleted, changed=kept)
    return OK


@command("acl|save", arity=2, flags="admin noscript loading stale", group="server",
         since="6.0.0", complexity="O(N). Where N is the number of configured users.",
         summary="Save the current ACL rules in the configured ACL file")
def acl_save(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL SAVE"""
    path = _acl_file(ctx)
    try:
        ctx.engine.acl.save_file(path)
    except OSError as exc:
        log.warning("Writing ACL file for ACL SAVE: %s", exc.strerror or exc)
        raise CommandError(ACL_SAVE_FAILED) from None
    return OK


# -- GENPASS, HELP -------------------------------------------------------------------
@command("acl|genpass", arity=-2, flags="noscript loading stale", group="server",
         since="6.0.0", complexity="O(1)",
         summary="Generate a pseudorandom secure password to use for ACL users")
def acl_genpass(ctx: Ctx, argv: list[bytes]) -> object:
    """ACL GENPASS [bits]"""
    if len(argv) > 3:
        raise subcommand_syntax(argv[1], argv[0])
    bits = parse_int(argv[2]) if len(argv) == 3 else 256
    if not 0 < bits <= GENPASS_MAX_BITS:
        raise CommandError(ACL_GENPASS_BITS)
    return genpass(bits)


help_command("acl", group="server", since="6.0.0",
             summary="Show helpful text about the different subcommands")
