"""Clients: their creation and closing, their user, and ACL changes.

Which dispatch a client uses (``refresh_access``) follows its user and
authentication; ACL LOG entries are written here (``acl_denied``).
"""

from __future__ import annotations

from typing import Any

from .. import errors
from ..acl.selectors import DENIED_AUTH, DENIED_CHANNEL, DENIED_CMD, DENIED_KEY
from ..acl.users import User
from ..commands import table
from ..commands.contract import NO_DISPATCH, ClientState
from ..commands.session.client import client_info_line
from ..errors import CommandError
from .base import EngineCore

# INFO stats' ACL counters, by the reason of the refusal.
_DENIED_STATS = {DENIED_AUTH: "acl_access_denied_auth", DENIED_CMD: "acl_access_denied_cmd",
                 DENIED_KEY: "acl_access_denied_key", DENIED_CHANNEL: "acl_access_denied_channel"}


def _load_users(self: EngineCore) -> None:
    """The users a server starts with: requirepass, the config file's
    ``user`` lines or the aclfile (not both).  Raises ValueError with
    Redis's reason when they cannot be loaded."""
    config = self.config
    if config["requirepass"]:
        self.acl.set_default_password(config["requirepass"].encode("utf-8", "surrogateescape"))
    if config["aclfile"] and config.users:
        raise ValueError(errors.ACL_FILE_AND_USERS)
    self.acl.load_config_users(config.users)
    if config["aclfile"]:
        try:
            with open(config["aclfile"], "rb") as f:
                text = f.read()
        except OSError as exc:
            raise ValueError("Aborting Redis startup because of ACL errors: Error loading "
                             "ACLs, opening file '%s': %s" % (config["aclfile"], exc.strerror)
                             ) from None
        try:
            users = self.acl.parse_file(text, config["aclfile"].encode())
        except CommandError as exc:
            raise ValueError("Aborting Redis startup because of ACL errors: "
                             + exc.message[4:].decode("utf-8", "replace")) from None
        self.acl.replace_users(users)


# -- clients ------------------------------------------------------------------
def new_client(self: EngineCore, **attrs: Any) -> ClientState:
    """A connection's client: the default user, authenticated when that
    user needs no password.  The server's own clients (``kind`` aof or
    master) have no user and may run anything, as Redis's."""
    now = self.clock.monotonic()
    client = ClientState(id=self._next_client_id, created=now, last_interaction=now, **attrs)
    if client.kind == "normal":
        client.user = self.acl.default
        client.authenticated = client.ever_authenticated = not self.acl.auth_required()
    self._next_client_id += 1
    self.clients[client.id] = client
    self.stats["total_connections_received"] += 1
    self.refresh_access(client)
    return client


# -- ACL --------------------------------------------------------------------------
def refresh_access(self: EngineCore, client: ClientState) -> None:
    """Which dispatch a client uses: the engine's cache when it may run
    anything (authenticated, or no password needed, and a user without
    restrictions), else an empty one (``NO_DISPATCH``), so that each of its
    commands is admitted by :func:`~tidelog.engine.admission.admit`; so is
    each command of a client that tracks keys (CLIENT TRACKING: its calls
    take CALL_TRACK).  This is half of the settled rule (admission.py).
    Called whenever the client's user, the users or its tracking change."""
    user = client.user
    free = (client.authenticated or not self.acl.auth_required()) and \
        (user is None or user.unrestricted) and client.tracking is None
    client.dispatch = self._dispatch if free else NO_DISPATCH


def set_client_user(self: EngineCore, client: ClientState, user: User | None) -> None:
    """AUTH / HELLO AUTH succeeded (``user``), or RESET (None: the default
    user, authenticated as at connect)."""
    if user is None:
        client.user = self.acl.default
        client.authenticated = not self.acl.auth_required()
    else:
        client.user = user
        client.authenticated = client.ever_authenticated = True
    self.refresh_access(client)


def users_changed(self: EngineCore, current: ClientState | None, deleted: list[User] = (),  # type: ignore[assignment]
                  changed: list[User] = ()) -> None:  # type: ignore[assignment]
    """After ACL SETUSER, DELUSER, LOAD or requirepass: the clients of a
    deleted user are closed (``current``, the one running the command,
    after its reply), subscribers whose channels a changed user no
    longer allows too; every client's dispatch is chosen again."""
    gone = {id(u) for u in deleted}
    narrowed = {id(u) for u in changed}
    for client in list(self.clients.values()):
        user = client.user
        if user is not None and id(user) in gone:
            client.user, client.authenticated = self.acl.default, False
            self.disconnect(client, current)
        elif user is not None and id(user) in narrowed and client.pubsub is not None and \
                not self._subscriptions_allowed(client, user):
            self.disconnect(client, current)
        self.refresh_access(client)


def _subscriptions_allowed(self: EngineCore, client: ClientState, user: User) -> bool:
    channels, patterns, shard = client.pubsub.kinds
    return all(user.channel_allowed(c, False) for c in (*channels, *shard)) and \
        all(user.channel_allowed(p, True) for p in patterns)


def disconnect(self: EngineCore, client: ClientState, current: ClientState | None) -> None:
    """Close a client: ``current`` (the one running the command) once its
    reply is written, any other now."""
    if client is current:
        client.close_after_reply = True
    elif client.kill is not None:
        client.kill()


def acl_denied(self: EngineCore, client: ClientState, result: int, spec: table.CommandSpec | None,
               argv: list[bytes], at: int, context: bytes,
               username: bytes | None = None) -> None:
    """Log a refusal in ACL LOG (and count it in INFO stats): the
    command's name, or the key or channel at ``at``; an AUTH failure
    logs the command's name as sent and the user name tried."""
    user = client.user
    if result == DENIED_CMD and spec is not None:
        obj = spec.name.encode()
    elif result == DENIED_AUTH:
        obj = argv[0]
    else:
        obj = argv[at]
    if username is None:
        username = user.name if user is not None else b"default"
    self.stats[_DENIED_STATS[result]] += 1
    self.acl.add_log(result, context, obj, username,
                     client_info_line(self, client, argv), self.clock.now_ms())


def client_closed(self: EngineCore, client: ClientState) -> None:
    """Forget a client: unblock it silently and drop its watches."""
    if client.blocked is not None:
        self._unblock(client.blocked)
    self.unwatch_all(client)
    self.drop_subscriptions(client)
    if client.tracking is not None:
        self.tracking.disable(client)
    self.replication.client_closed(client)
    self.remove_monitor(client)
    client.himport = None  # its HIMPORT fieldsets go with it
    if client.kind == "normal" and any(db.staged for db in self.dbs):
        self.drop_staged(lambda copy: copy.owner == client.id)  # its TIDELOG.STAGE tokens
    if client.postponed:
        client.postponed = False
        self.ops.postponed.remove(client)
    self.clients.pop(client.id, None)


def drop_subscriptions(self: EngineCore, client: ClientState) -> None:
    """Forget every Pub/Sub subscription of a client (RESET, close)."""
    if client.pubsub is not None:
        self.pubsub.drop(client)
        client.pubsub = None


def watched_keys(self: EngineCore) -> tuple[int, int]:
    """INFO's watching_clients and total_watched_keys (each database's
    distinct watched keys).  O(clients + databases)."""
    watching = sum(1 for c in self.clients.values() if c.watched)
    return watching, sum(len(db.watchers) for db in self.dbs)
