"""The cluster bus's shell: sockets, the timer and nodes.conf around the
state machine.

:class:`tidelog.cluster.state.ClusterState` decides everything and does no
I/O; this module gives it its inputs and carries out its actions:

- the bus listener on ``cluster-port`` (``port`` + 10000 when 0), on the
  client port's bind addresses; an inbound connection becomes a
  :class:`~tidelog.cluster.actions.Link` (``inbound``);
- an outbound connection per :class:`~tidelog.cluster.actions.Connect`,
  made without blocking, given up after ``cluster-node-timeout``;
- per link a :class:`~tidelog.cluster.bus.FrameReader`; each whole frame
  is decoded and handed to ``on_message``; a frame that does not decode
  closes that link only;
- the actions, in the order the state machine gave them: Send, Close,
  SaveConfig (nodes.conf written to a temporary file, fsynced when asked,
  renamed over the old one, and locked again), Replicate (the replica code
  REPLICAOF drives), DeleteSlotKeys, Deliver (a bus PUBLISH to this node's
  subscribers), PauseWrites, Log;
- every 100 ms: the mutable ``cluster-*`` options into the settings, the
  replication offset, ``on_tick``, and the redirection of blocked clients
  whose slot moved.

With ``tls-cluster yes`` every link is TLS (Redis's rule): the listener
serves TLS, a peer must present a certificate the ``tls-ca-cert-*`` CAs sign
(whatever ``tls-auth-clients`` says), and this node's links present
``tls-client-cert-file`` (else ``tls-cert-file``).  CONFIG SET of
``tls-cluster`` or a ``tls-*`` option reaches the bus at the next tick: the
contexts are built again and the listener serves its same sockets under the
new one (as the client listeners do); links already made stay as they are.
The bus port is then ``tls-port`` + 10000 unless ``cluster-port`` is set,
and the node announces its TLS port as its port and its plain port as
``pport`` (7.0.15's rule).

nodes.conf is locked (``flock``) for the life of the process, as Redis
locks it: a second server started on the same file refuses to start.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

from .. import tls
from ..clock import next_beat
from ..cluster import bus
from ..cluster.actions import (
    Close,
    Connect,
    DeleteSlotKeys,
    Deliver,
    Link,
    Log,
    PauseWrites,
    Replicate,
    SaveConfig,
    Send,
)
from ..cluster.messages import MASTER, MYSELF
from ..cluster.nodes import Node, Topology, random_name
from ..resp.replies import Push
from .cluster_config import ConfigLockError, config_path, lock_config, write_config

log = logging.getLogger("tidelog")

TICK_S = 0.1
"""The state machine's timer (Redis's clusterCron runs every 100 ms)."""

LOG_LEVELS = {"debug": logging.DEBUG, "verbose": 15, "notice": logging.INFO,
              "warning": logging.WARNING}


def now_ms() -> int:
    """Wall-clock milliseconds, the bus's time base (ping and pong times)."""
    return int(time.time() * 1000)


def client_port(config: Any) -> int:
    """The client port the cluster knows the node by: ``tls-port`` under
    ``tls-cluster yes``, else ``port``."""
    return int(config["tls-port"]) if config["tls-cluster"] else int(config["port"])


def bus_port(config: Any) -> int:
    """``cluster-port``, or the client port + 10000 when it is 0."""
    return int(config["cluster-port"]) or client_port(config) + 10000


TLS_OPTIONS = ("tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
               "tls-client-key-file", "tls-client-key-file-pass", "tls-ca-cert-file",
               "tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-prefer-server-ciphers")
"""The options the bus's TLS contexts are built from."""


class BusTls:
    """The bus's TLS contexts (listener side, connecting side), built when
    first asked for and again when one of :data:`TLS_OPTIONS` changed; None
    while ``tls-cluster`` is off.  A configuration that cannot be used keeps
    the contexts built before it (logged once per change)."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self._key: tuple[Any, ...] | None = None
        self._contexts: tuple[ssl.SSLContext, ssl.SSLContext] | None = None

    def contexts(self) -> tuple[ssl.SSLContext, ssl.SSLContext] | None:
        config = self.config
        if not config["tls-cluster"]:
            return None
        key = tuple(config[name] for name in TLS_OPTIONS)
        if key != self._key:
            self._key = key
            try:
                self._contexts = (tls.bus_server_context(config), tls.client_context(config))
            except tls.TlsError as exc:
                log.warning("Cluster bus: failed to configure TLS: %s", exc)
        return self._contexts

    def server(self) -> ssl.SSLContext | None:
        contexts = self.contexts()
        return None if contexts is None else contexts[0]

    def client(self) -> ssl.SSLContext | None:
        contexts = self.contexts()
        return None if contexts is None else contexts[1]


# -- the settings the state machine reads -------------------------------------------------
SETTINGS_FROM_CONFIG: dict[str, str] = {
    "node_timeout": "cluster-node-timeout",
    "announce_ip": "cluster-announce-ip",
    "announce_port": "cluster-announce-port",
    "announce_cport": "cluster-announce-bus-port",
    "announce_pport": "cluster-announce-tls-port",
    "announce_hostname": "cluster-announce-hostname",
    "announce_human_nodename": "cluster-announce-human-nodename",
    "require_full_coverage": "cluster-require-full-coverage",
    "allow_reads_when_down": "cluster-allow-reads-when-down",
    "allow_pubsubshard_when_down": "cluster-allow-pubsubshard-when-down",
    "replica_validity_factor": "cluster-replica-validity-factor",
    "migration_barrier": "cluster-migration-barrier",
    "allow_replica_migration": "cluster-allow-replica-migration",
    "replica_no_failover": "cluster-replica-no-failover",
    "repl_ping_period_s": "repl-ping-replica-period",
    "preferred_endpoint_type": "cluster-preferred-endpoint-type",
    "link_sendbuf_limit": "cluster-link-sendbuf-limit",
}
"""ClusterSettings field -> the option it follows (CONFIG SET reaches the
settings at the next tick)."""


def _setting_value(field: str, value: Any) -> Any:
    if isinstance(value, str) and field.startswith("announce_") and field not in (
            "announce_port", "announce_cport", "announce_pport"):
        return value.encode()
    return value


def settings_values(config: Any) -> dict[str, Any]:
    """The settings' values as the configuration has them now."""
    return {field: _setting_value(field, config[name]) for field, name in SETTINGS_FROM_CONFIG.items()}


def refresh_settings(settings: Any, config: Any) -> None:
    """Copy the options into the fields ``settings`` has."""
    for field, value in settings_values(config).items():
        if hasattr(settings, field) and getattr(settings, field) != value:
            setattr(settings, field, value)


# -- one link ----------------------------------------------------------------------------
def _address(name: Any) -> bytes:
    """The IP of a socket name (an IPv4 address mapped in IPv6 as IPv4)."""
    if not name:
        return b""
    ip = str(name[0]).encode()
    return ip[7:] if ip.startswith(b"::ffff:") else ip


class _LinkProtocol(asyncio.Protocol):
    """The asyncio side of one bus link: bytes in, frames out."""

    def __init__(self, shell: ClusterShell, link: Link | None) -> None:
        self.shell = shell
        self.link = link
        self.transport: asyncio.Transport | None = None
        self.reader = bus.FrameReader()
        self.closed_by_us = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # (uvloop's are no subclass)
        local_ip = _address(transport.get_extra_info("sockname"))
        if self.link is None:  # inbound: the listener made us
            self.link = Link(inbound=True, ctime=now_ms(),
                             peer_ip=_address(transport.get_extra_info("peername")),
                             local_ip=local_ip)
            self.shell.opened(self)
        else:
            self.link.local_ip = local_ip

    def data_received(self, data: bytes) -> None:
        link = self.link
        if link is None or self.closed_by_us:
            return
        try:
            frames = self.reader.feed(data)
        except bus.BusError as exc:
            self.shell.drop(self, f"bad frame: {exc}")
            return
        link.receive_buffer_bytes = self.reader.pending
        for frame in frames:
            if self.closed_by_us:
                return
            try:
                msg = bus.decode(frame)
            except bus.BusError as exc:
                self.shell.drop(self, f"bad message: {exc}")
                return
            self.shell.received(self, msg)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed_by_us:
            self.closed_by_us = True
            self.shell.lost(self)

    def write(self, data: bytes) -> None:
        transport = self.transport
        if transport is None or self.closed_by_us or transport.is_closing():
            return
        transport.write(data)
        assert self.link is not None
        self.link.send_buffer_bytes = transport.get_write_buffer_size()
        self.link.events = "rw" if self.link.send_buffer_bytes else "r"

    def close(self) -> None:
        self.closed_by_us = True
        if self.transport is not None:
            self.transport.close()


# -- the shell ---------------------------------------------------------------------------
class ClusterShell:
    """The bus around one :class:`ClusterState`.

    ``render_config()`` gives nodes.conf's text (the topology as it is);
    ``engine`` is the server's engine (replication, pub/sub, pause, the
    key space).  ``start()`` listens and starts the timer; ``stop()``
    closes everything."""

    def __init__(self, engine: Any, state: Any, config_path: str, lock_fd: int | None,
                 render_config: Callable[[], str]) -> None:
        self.engine = engine
        self.state = state
        self.config_path = config_path
        self.lock_fd = lock_fd
        self.render_config = render_config
        self.links: dict[Link, _LinkProtocol] = {}
        self.connecting: dict[int, asyncio.Task[None]] = {}
        self.servers: list[asyncio.Server] = []
        self.tls = BusTls(engine.config)
        self.serving_context: ssl.SSLContext | None = None
        """The TLS context the listener serves with (None: plain TCP)."""
        self.reserving: asyncio.Task[None] | None = None
        self.port = bus_port(engine.config)
        """The bus port listened on (start() sets it)."""
        self.timer: asyncio.Task[None] | None = None
        self.stopping = False
        self.in_actions = False
        self.kicked = False
        self.router: Any = None
        """The slot router; its options follow CONFIG SET at each tick."""
        self.control: Any = None
        """The CLUSTER commands' control (tidelog.cluster.control.Control)."""

    # -- start and stop
    async def start(self, hosts: list[str], port: int, backlog: int = 511) -> None:
        """Listen on ``port`` at each of ``hosts`` (``-`` prefixes dropped,
        as ``bind`` allows), then start the 100 ms timer.  Raises OSError."""
        loop = asyncio.get_running_loop()
        self.port = port
        context = self.serving_context = self.tls.server()
        if self.engine.config["tls-cluster"] and context is None:
            raise OSError("the cluster bus cannot use TLS (tls-cluster yes): see the log")
        for host in hosts:
            host = host.lstrip("-")
            try:
                server = await loop.create_server(lambda: _LinkProtocol(self, None), host, port,
                                                  backlog=backlog, reuse_address=True,
                                                  ssl=context)
            except OSError:
                if host.startswith("::") or host == "*":
                    continue  # no IPv6 here: as the client port does
                raise
            self.servers.append(server)
        self.timer = asyncio.create_task(self._tick_loop())
        self.run_actions()  # whatever start-up queued (a first SaveConfig)

    async def stop(self) -> None:
        self.stopping = True
        if self.timer is not None:
            self.timer.cancel()
        for task in list(self.connecting.values()):
            task.cancel()
        if self.reserving is not None:
            self.reserving.cancel()
        for server in self.servers:
            server.close()
        for proto in list(self.links.values()):
            proto.close()
        self.links.clear()
        for server in self.servers:
            try:
                await asyncio.wait_for(server.wait_closed(), 1.0)
            except (TimeoutError, OSError):
                pass
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None

    # -- TLS (tls-cluster)
    def refresh_listener(self) -> None:
        """Serve the bus's sockets under the TLS context the options give
        now (tls-cluster switched, a tls-* option changed), as the client
        listeners take a new context: the same sockets, new servers; the
        links stay."""
        if self.stopping or self.reserving is not None:
            return
        context = self.tls.server()
        if context is self.serving_context or not self.servers:
            return
        self.reserving = asyncio.create_task(self._reserve(context))

    async def _reserve(self, context: ssl.SSLContext | None) -> None:
        loop = asyncio.get_running_loop()
        backlog = int(self.engine.config["tcp-backlog"])
        try:
            socks = [socket.socket(fileno=os.dup(sock.fileno()))
                     for server in self.servers for sock in server.sockets]
            for server in self.servers:
                server.close()
            self.servers = []
            for sock in socks:
                self.servers.append(await loop.create_server(
                    lambda: _LinkProtocol(self, None), sock=sock, ssl=context, backlog=backlog))
            self.serving_context = context
            log.info("Cluster bus: serving %s", "over TLS" if context is not None
                     else "plain TCP")
        except OSError as exc:
            log.warning("Cluster bus: could not serve the bus port again: %s", exc)
        finally:
            self.reserving = None

    # -- events from the links
    def opened(self, proto: _LinkProtocol) -> None:
        assert proto.link is not None
        self.links[proto.link] = proto
        self.state.on_link_connected(proto.link, now_ms())
        self.run_actions()

    def received(self, proto: _LinkProtocol, msg: Any) -> None:
        self.state.on_message(proto.link, msg, now_ms())
        self.run_actions()

    def lost(self, proto: _LinkProtocol) -> None:
        link = proto.link
        if link is None or self.links.pop(link, None) is None:
            return
        if not self.stopping:
            self.state.on_link_closed(link, now_ms())
            self.run_actions()

    def drop(self, proto: _LinkProtocol, why: str) -> None:
        """Close one link whose peer sent what the bus cannot take."""
        link = proto.link
        log.debug("Cluster bus: closing a link (%s)", why)
        proto.close()
        if link is not None and self.links.pop(link, None) is not None:
            self.state.on_link_closed(link, now_ms())
            self.run_actions()

    # -- outbound links
    def _connect(self, node: Node) -> None:
        key = id(node)
        if key in self.connecting or self.stopping:
            return
        self.connecting[key] = asyncio.create_task(self._connect_task(node))

    async def _connect_task(self, node: Node) -> None:
        loop = asyncio.get_running_loop()
        timeout = max(int(self.engine.config["cluster-node-timeout"]), 1000) / 1000
        link = Link(inbound=False, ctime=now_ms(), node=node)
        try:
            try:
                context = self.tls.client()
                _, proto = await asyncio.wait_for(
                    loop.create_connection(lambda: _LinkProtocol(self, link),
                                           node.ip.decode(errors="replace"), node.cport,
                                           ssl=context, server_hostname="" if context else None,
                                           ssl_handshake_timeout=timeout if context else None),
                    timeout)
            except (TimeoutError, OSError, UnicodeError, ValueError, ssl.SSLError) as exc:
                if not self.stopping:
                    log.debug("Cluster bus: connecting to %s:%d failed: %s",
                              node.ip.decode(errors="replace"), node.cport, exc)
                    self.state.on_link_failed(node, now_ms())
                    self.run_actions()
                return
            if self.stopping:
                proto.close()
                return
            self.links[link] = proto
            self.state.on_link_connected(link, now_ms())
            self.run_actions()
        finally:
            self.connecting.pop(id(node), None)

    # -- the actions
    def run_actions(self) -> None:
        """Carry out what the state machine asked, in order, until its
        outbox stays empty."""
        if self.in_actions:
            return  # an action's own events come back here: the outer loop takes them
        self.in_actions = True
        try:
            while True:
                actions = self.state.drain()
                if not actions:
                    return
                for action in actions:
                    try:
                        self.carry_out(action)
                    except Exception:  # one failed action must not stop the bus
                        log.exception("Cluster bus: %s failed", type(action).__name__)
        finally:
            self.in_actions = False

    def kick(self) -> None:
        """Carry out the outbox soon (next loop turn), not at the next tick:
        for what a command queued (a PUBLISH to broadcast, a MEET)."""
        if not self.kicked and not self.stopping:
            self.kicked = True
            asyncio.get_running_loop().call_soon(self._kicked)

    def _kicked(self) -> None:
        self.kicked = False
        self.run_actions()

    def carry_out(self, action: Any) -> None:
        if isinstance(action, Send):
            proto = self.links.get(action.link)
            if proto is not None:
                proto.write(bus.encode(action.message))
                limit = int(self.engine.config["cluster-link-sendbuf-limit"])
                if limit and action.link.send_buffer_bytes > limit:
                    self.drop(proto, "send buffer over cluster-link-sendbuf-limit")
                    if self.control is not None:  # CLUSTER INFO counts them
                        self.control.links_buffer_limit_exceeded += 1
        elif isinstance(action, Connect):
            self._connect(action.node)
        elif isinstance(action, Close):
            proto = self.links.pop(action.link, None)
            if proto is not None:
                proto.close()
        elif isinstance(action, SaveConfig):
            self.save_config(action.fsync)
        elif isinstance(action, Replicate):
            self.replicate(action.master)
        elif isinstance(action, DeleteSlotKeys):
            self.delete_slot_keys(action.slots)
        elif isinstance(action, Deliver):
            self.deliver(action.channel, action.message, action.shard)
        elif isinstance(action, PauseWrites):
            self.pause_writes(action.until)
        elif isinstance(action, Log):
            log.log(LOG_LEVELS.get(action.level, logging.INFO), "%s", action.text)

    def save_config_now(self) -> None:
        """CLUSTER SAVECONFIG: nodes.conf written and fsynced now; OSError
        when it cannot be."""
        self.lock_fd = write_config(self.config_path, self.render_config(), True, self.lock_fd,
                                    self._release)

    def _release(self, fd: int) -> None:
        """Close a replaced nodes.conf's descriptor on a worker thread (the
        file system frees the old file in that close)."""
        try:
            asyncio.get_running_loop().run_in_executor(None, os.close, fd)
        except RuntimeError:  # no loop (start-up, shut-down): here and now
            os.close(fd)

    def save_config(self, fsync: bool) -> None:
        try:
            self.lock_fd = write_config(self.config_path, self.render_config(), fsync,
                                        self.lock_fd, self._release)
        except OSError as exc:
            log.warning("Could not save the cluster configuration %s: %s", self.config_path,
                        exc.strerror or exc)

    def replicate(self, master: Node | None) -> None:
        """As REPLICAOF host port / NO ONE, without its cluster-mode refusal."""
        from ..replication.primary import attach
        primary = attach(self.engine)
        if master is None:
            primary.replicaof(None, 0, "cluster")
        else:
            primary.replicaof(master.ip.decode(errors="replace"), master.port, "cluster")

    def delete_slot_keys(self, slots: list[int]) -> None:
        """Delete the keys of ``slots`` (cluster mode has one database), as
        Redis's delKeysInSlot (:meth:`Engine.delete_slot_keys`: each a DEL
        to the AOF and the replicas, its waiters woken, a ``del`` keyspace
        event).  O(keys of those slots), through the per-slot key index."""
        doomed = sum(self.engine.delete_slot_keys(slot) for slot in slots)
        if doomed:
            log.info("Deleted %d keys of slots this node no longer serves", doomed)

    def deliver(self, channel: bytes, message: bytes, shard: bool) -> None:
        """A PUBLISH (SPUBLISH when ``shard``) from the bus, to this node's
        subscribers, as PUBLISH delivers locally."""
        pubsub = self.engine.pubsub
        if shard:
            receivers = pubsub.shard_receivers(channel)
            if receivers:
                push = Push([b"smessage", channel, message])
                for client in receivers:
                    client.send(push)
            return
        direct, by_pattern = pubsub.receivers(channel)
        if direct:
            push = Push([b"message", channel, message])
            for client in direct:
                client.send(push)
        for pattern, client in by_pattern:
            client.send(Push([b"pmessage", pattern, channel, message]))

    def pause_writes(self, until: int) -> None:
        if until == 0:
            self.engine.unpause()
            return
        ms = until - now_ms()
        if ms > 0:
            self.engine.pause(ms, "write")

    # -- the timer
    async def _tick_loop(self) -> None:
        while not self.stopping:
            loop = asyncio.get_running_loop()
            await asyncio.sleep(next_beat(loop.time(), TICK_S) - loop.time())
            try:
                self.tick()
            except Exception:
                log.exception("Cluster bus: the timer failed")

    def tick(self) -> None:
        config = self.engine.config
        settings = getattr(self.state, "settings", None)
        if settings is not None:
            refresh_settings(settings, config)
        topology = getattr(self.state, "topology", None)
        if topology is not None:
            announce_myself(topology.myself, config, self.port)
        router = self.router
        if router is not None:
            router.tls_cluster = bool(config["tls-cluster"])
            router.allow_reads_when_down = config["cluster-allow-reads-when-down"]
            router.allow_pubsubshard_when_down = config["cluster-allow-pubsubshard-when-down"]
            router.endpoint_type = config["cluster-preferred-endpoint-type"]
        replication = self.engine.replication
        offset = getattr(replication, "offset", None)
        if isinstance(offset, int):
            self.state.set_repl_offset(offset)
        upstream = getattr(replication, "upstream", None)
        if upstream is not None:  # a replica: how old its master's data is
            seen = upstream.last_io if upstream.link_up else upstream.down_since
            self.state.set_master_data_age(int((self.engine.clock.monotonic() - seen) * 1000))
        self.refresh_listener()
        self.state.on_tick(now_ms())
        redirect = getattr(self.engine, "redirect_blocked", None)
        if redirect is not None:
            redirect()
        self.run_actions()


# -- start-up ----------------------------------------------------------------------------
class ClusterStartError(Exception):
    """The node cannot start in cluster mode (its text is the log line)."""


def announce_myself(myself: Node, config: Any, cport: int = 0) -> None:
    """The ports this node gives in its header (7.0.15's
    clusterUpdateMyselfAnnouncedPorts): under ``tls-cluster yes`` the TLS
    port as its port and the plain one as ``pport``, else the plain one;
    ``cluster-announce-tls-port`` (with TLS, the plain port then being
    ``cluster-announce-port``) or ``cluster-announce-port`` over them; the
    bus port: ``cluster-announce-bus-port``, else ``cport`` (the port
    listened on), else the configured one."""
    announce_port, announce_tls = (int(config["cluster-announce-port"]),
                                   int(config["cluster-announce-tls-port"]))
    if config["tls-cluster"]:
        myself.port, myself.pport = int(config["tls-port"]), int(config["port"])
        if announce_tls:
            myself.port, myself.pport = announce_tls, announce_port
        elif announce_port:
            myself.port = announce_port
    else:
        myself.port, myself.pport = announce_port or int(config["port"]), 0
    myself.cport = int(config["cluster-announce-bus-port"]) or cport or bus_port(config)


def _settings(state_module: Any, config: Any) -> Any:
    """ClusterSettings from the options (the fields it has)."""
    cls: Any = state_module.ClusterSettings
    fields = getattr(cls, "__dataclass_fields__", None)
    if fields:
        values = settings_values(config)
        return cls(**{k: v for k, v in values.items() if k in fields})
    settings = cls()
    refresh_settings(settings, config)
    return settings


def prepare(engine: Any, config: Any) -> ClusterShell:
    """``cluster-enabled yes``, before the data is loaded: lock and load
    nodes.conf (or make a new node and save it), build the state machine,
    the CLUSTER commands' control and the router, and attach them to the
    engine.  The shell is returned unstarted.  Raises ClusterStartError."""
    path = config_path(config)
    try:
        lock_fd = lock_config(path)
    except ConfigLockError as exc:
        raise ClusterStartError(str(exc)) from None
    try:  # by name: the modules of cluster mode this shell drives
        control, routing, texts, state_module = (
            importlib.import_module(f"tidelog.cluster.{name}")
            for name in ("control", "routing", "texts", "state"))
    except ImportError as exc:  # a part of cluster mode this build lacks
        os.close(lock_fd)
        raise ClusterStartError(f"Cluster mode is not available: {exc}") from None
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
    except OSError as exc:
        os.close(lock_fd)
        raise ClusterStartError(f"Could not read {path}: {exc.strerror}") from None
    created = not text.strip()
    if created:
        myself = Node(name=random_name(), flags=MYSELF | MASTER, ctime=now_ms())
        myself.shard_id = random_name()
        topology = Topology(myself=myself)
        log.info("No cluster configuration found, I'm %s", myself.name.decode())
    else:
        try:
            topology = texts.load_nodes_conf(text)
        except ValueError as exc:
            os.close(lock_fd)
            raise ClusterStartError(
                f"Unrecoverable error: corrupted cluster config file \"{path}\": {exc}") from None
        log.info("Node configuration loaded, I'm %.40s", topology.myself.name.decode())
    announce_myself(topology.myself, config)
    topology.slot_stats = engine.slot_stats  # a slot changing owner: its counters start again
    settings = _settings(state_module, config)
    state = state_module.ClusterState(topology, settings, now_ms())
    state.offset_source = lambda: int(engine.replication.offset)  # exact, for a paused master

    def render() -> str:
        return str(texts.nodes_conf(topology))

    shell = ClusterShell(engine, state, path, lock_fd, render)
    shell.control = engine.cluster = control.Control(topology, state)
    shell.control.kick = shell.kick  # what a command queued goes out soon
    shell.control.save_now = shell.save_config_now
    router = routing.Router(topology, allow_reads_when_down=config["cluster-allow-reads-when-down"],
                            allow_pubsubshard_when_down=config["cluster-allow-pubsubshard-when-down"],
                            endpoint_type=config["cluster-preferred-endpoint-type"])
    router.tls_cluster = bool(config["tls-cluster"])
    engine.set_slot_router(router)
    shell.router = router
    enable = getattr(engine, "enable_slot_index", None)
    if enable is not None:
        enable()
    if created:
        shell.save_config(True)
    return shell
