"""``tidelog-server --cluster-local N``: a Redis Cluster of N Tidelog
processes on this machine, started, created, watched and stopped as one.

    tidelog-server --cluster-local N [--port P] [--dir D]
                   [--cluster-replicas R] [--cluster-create yes|no]
                   [config-file] [--option value ...]

Node i listens on ``P + i`` (bus port ``P + i + 10000``) and keeps its data,
its ``nodes.conf`` and its log (``server.log``) in ``D/<its port>/``.  Every
other option goes to every node as given (``--appendonly yes``,
``--cluster-node-timeout 5000``, a config file); ``--port`` and ``--dir`` are
the launcher's, ``cluster-enabled yes`` and ``daemonize no`` are forced.

What it does, in order:

1. Checks that the client and bus ports of the range are free (else one
   line saying which is not, exit code 1, nothing started).
2. Starts the N processes, node i pinned to usable core ``i mod ncpu``
   (``os.sched_setaffinity``; skipped where the system has none), and
   waits until each answers PING.
3. If every node is empty (knows only itself, no slot, no key), creates the
   cluster with the steps ``redis-cli --cluster create`` takes: the first
   ``N / (R + 1)`` nodes are masters and share the 16384 slots as redis-cli
   splits them (:func:`split_slots`), ``CLUSTER ADDSLOTSRANGE`` on each,
   ``CLUSTER SET-CONFIG-EPOCH`` 1..N, ``CLUSTER MEET`` of the first node
   from every other, and, once every node knows every other,
   ``CLUSTER REPLICATE`` on the replicas (:func:`assign_replicas`).  Nodes
   that already are in a cluster (a second start over the same
   directories) come back from their ``nodes.conf``: nothing is created
   again.  ``--cluster-create no`` creates nothing: the nodes wait to be
   added to a cluster (``redis-cli --cluster add-node``).
4. Waits (bounded) until every node says ``cluster_state:ok`` and all list
   the same nodes and slots, then prints one line per node: port, bus port,
   role, slots, pid, core, data directory.
5. Restarts a node that exits, after a back-off (0.5 s, doubling while it
   keeps exiting within 10 s of its start, at most 30 s); its ``nodes.conf``
   brings it back into the cluster with the same node id.
6. On SIGINT (Ctrl-C) or SIGTERM: SIGTERM to every node (each saves and
   shuts down as it would alone), a wait of at most ``STOP_WAIT_S``, then
   SIGKILL to any still running; exit code 0.

The launcher talks RESP to its nodes with :class:`NodeClient`, a small
blocking client (RESP2 requests and replies, nothing more).
"""

from __future__ import annotations

import ctypes
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import split_config_args
from ..keyslot import SLOTS

BUS_PORT_OFFSET = 10000
STOP_WAIT_S = 60.0           # SIGTERM to SIGKILL
READY_WAIT_S = 30.0          # a started node answers PING within this
JOIN_WAIT_S = 90.0           # the cluster agrees and is ok within this
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
STABLE_S = 10.0              # a node up this long starts its back-off afresh
POLL_S = 0.1
LOG_FILE = "server.log"       # each node's log, in its directory
OUTPUT_FILE = "output.log"    # what a node writes to stdout or stderr (little or nothing)

OWN_OPTIONS = ("cluster-local", "cluster-replicas", "cluster-create", "port", "dir")

USAGE = """\
Usage: tidelog-server --cluster-local N [--port P] [--dir D]
                      [--cluster-replicas R] [--cluster-create yes|no]
                      [config-file] [--option value ...]

Starts N Tidelog nodes on ports P..P+N-1 (bus ports +10000), each with its
data, nodes.conf and server.log in D/<port>/, and makes them one Redis
Cluster as `redis-cli --cluster create` would (R replicas per master), unless
they already are one (a second start over the same directories) or
--cluster-create is no (the nodes then wait for `redis-cli --cluster
add-node`).  A node that exits is started again.  Ctrl-C or SIGTERM stops them
all.  Other options go to every node.  Defaults: P 6379, D ./data, R 0."""


class LauncherError(Exception):
    """The launcher cannot go on; its text is the line to print."""


class Stopping(Exception):
    """SIGINT or SIGTERM arrived while the launcher waited for something."""


# -- the plan: which node is a master with which slots, which one replicates --------------

def _f32(x: float) -> float:
    """``x`` rounded to a C ``float``, as redis-cli computes its slot cursor."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def split_slots(masters: int) -> list[tuple[int, int]]:
    """The 16384 slots in ``masters`` contiguous ranges ``(first, last)``,
    as ``redis-cli --cluster create`` splits them: a cursor advancing by
    16384 / masters in single precision, each range ending at the cursor
    rounded half away from zero, the last range ending at 16383.

    >>> split_slots(3)
    [(0, 5460), (5461, 10922), (10923, 16383)]

    Runtime complexity: O(masters)."""
    if masters < 1:
        raise ValueError("at least one master")
    per_node = _f32(SLOTS / masters)
    ranges = []
    first = 0
    cursor = 0.0
    for i in range(masters):
        last = math.floor(_f32(_f32(cursor + per_node) - 1) + 0.5)
        if last > SLOTS or i == masters - 1:
            last = SLOTS - 1
        last = max(last, first)
        ranges.append((first, last))
        first = last + 1
        cursor = _f32(cursor + per_node)
    return ranges


def masters_count(nodes: int, replicas: int) -> int:
    """How many of ``nodes`` are masters with ``replicas`` replicas each."""
    return nodes // (replicas + 1)


def assign_replicas(nodes: int, replicas: int) -> list[int | None]:
    """Per node (in port order), the index of the master it replicates, or
    None for a master: ``redis-cli --cluster create``'s assignment on one
    host.  The first ``nodes // (replicas + 1)`` nodes are masters; the rest,
    rotated by one (redis-cli rotates them for a better first guess), are
    handed out ``replicas`` per master in turn; then any left over get one
    each as extra replicas, master by master.  (redis-cli's anti-affinity
    pass swaps replicas between masters at random to spread them over hosts;
    on one host no swap changes anything, so it is not done.)

    >>> assign_replicas(6, 1)
    [None, None, None, 2, 0, 1]

    Runtime complexity: O(nodes)."""
    masters = masters_count(nodes, replicas)
    if masters < 1:
        raise ValueError("at least one master")
    master_of: list[int | None] = [None] * nodes
    pool = list(range(masters, nodes))
    if pool:
        pool = pool[1:] + pool[:1]
    for extra in (False, True):
        for m in range(masters):
            for _ in range(1 if extra else replicas):
                if not pool:
                    break
                master_of[pool.pop(0)] = m
        if not pool:
            break
    return master_of


# -- the command line ----------------------------------------------------------------------

@dataclass
class Options:
    nodes: int
    port: int = 6379
    dir: str = "data"
    replicas: int = 0
    create: bool = True
    host: str = "127.0.0.1"          # where the launcher reaches its nodes, and MEETs them
    config_file: str = ""            # absolute; given to every node first
    password: str | None = None      # --requirepass given to the nodes: the launcher AUTHs
    node_args: list[str] = field(default_factory=list)


def _number(name: str, value: str, low: int, high: int) -> int:
    try:
        number = int(value, 10)
    except ValueError:
        number = low - 1
    if not low <= number <= high:
        raise LauncherError(f"--{name} needs a number from {low} to {high}, got '{value}'")
    return number


def _directives(args: Sequence[str]) -> Iterator[list[str]]:
    """``--name value ...`` groups, as tidelog-server reads its command line."""
    group: list[str] | None = None
    for arg in args:
        if arg.startswith("--"):
            if group is not None:
                yield group
            words = split_config_args(arg[2:]) if arg[2:].strip() else [arg[2:]]
            if not words:
                raise LauncherError(f"bad option '{arg}' (unbalanced quotes)")
            group = [words[0].lower(), *words[1:]]
        elif group is not None:
            group.append(arg)
        else:
            raise LauncherError(f"unexpected argument '{arg}'")
    if group is not None:
        yield group


def _connect_host(bind: str) -> str:
    """The address of ``bind``'s first entry to connect to (a wildcard: loopback)."""
    first = bind.split()[0].lstrip("-") if bind.split() else "127.0.0.1"
    if first in ("*", "0.0.0.0"):
        return "127.0.0.1"
    if first in ("::*", "::"):
        return "::1"
    return first


def parse_args(argv: Sequence[str]) -> Options:
    """The launcher's options out of ``argv``; the rest, as given, for the
    nodes.  Raises LauncherError."""
    args = list(argv)
    node_args: list[str] = []
    config_file = ""
    if args and not args[0].startswith("-"):  # a config file, as tidelog-server takes one
        config_file = os.path.abspath(args.pop(0))
    own: dict[str, str] = {}
    for name, *values in _directives(args):
        if name in OWN_OPTIONS:
            if len(values) != 1:
                raise LauncherError(f"--{name} takes one value")
            own[name] = values[0]
        elif name == "cluster-port":
            raise LauncherError("--cluster-port cannot be given with --cluster-local: "
                                "each node's bus port is its port + 10000")
        else:
            node_args += ["--" + name, *values]
            if name in ("bind", "requirepass") and values:
                own[name] = " ".join(values)
    if "cluster-local" not in own:
        raise LauncherError("--cluster-local N is missing")
    nodes = _number("cluster-local", own["cluster-local"], 1, 1000)
    port = _number("port", own.get("port", "6379"), 1, 65535 - BUS_PORT_OFFSET - nodes + 1)
    replicas = _number("cluster-replicas", own.get("cluster-replicas", "0"), 0, nodes - 1)
    if masters_count(nodes, replicas) < 1:
        raise LauncherError(f"{nodes} nodes cannot have {replicas} replicas per master")
    create = own.get("cluster-create", "yes").lower()
    if create not in ("yes", "no"):
        raise LauncherError(f"--cluster-create takes yes or no, got '{create}'")
    return Options(nodes=nodes, port=port, dir=own.get("dir", "data"), replicas=replicas,
                   create=create == "yes", host=_connect_host(own.get("bind", "127.0.0.1")),
                   config_file=config_file, password=own.get("requirepass") or None,
                   node_args=node_args)


# -- a small blocking RESP client -----------------------------------------------------------

class ReplyError(Exception):
    """An error reply (``-ERR ...``); its text without the dash."""


class NodeClient:
    """One connection to a node: ``call("CLUSTER", "INFO")`` sends a RESP2
    request and returns the reply (bytes, int, list, None); an error reply
    raises ReplyError, a lost connection OSError."""

    def __init__(self, host: str, port: int, timeout: float = 10.0,
                 password: str | None = None) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.reader = self.sock.makefile("rb")
        if password is not None:
            try:
                self.call("AUTH", password)
            except BaseException:
                self.close()
                raise

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def __enter__(self) -> NodeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, *args: str | int | bytes) -> Any:
        out = bytearray(b"*%d\r\n" % len(args))
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            out += b"$%d\r\n%s\r\n" % (len(data), data)
        self.sock.sendall(out)
        return self._reply()

    def text(self, *args: str | int | bytes) -> str:
        reply = self.call(*args)
        return reply.decode() if isinstance(reply, bytes) else str(reply)

    def _line(self) -> bytes:
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed")
        return line[:-2]

    def _reply(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise ReplyError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            data = self.reader.read(size + 2)
            if len(data) != size + 2:
                raise ConnectionError("connection closed")
            return data[:-2]
        if kind == b"*":
            count = int(rest)
            return None if count < 0 else [self._reply() for _ in range(count)]
        raise ConnectionError(f"unexpected reply {line[:40]!r}")


def info_fields(text: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


@dataclass
class NodeLine:
    """One line of CLUSTER NODES."""
    id: str
    address: str
    flags: set[str]
    master: str
    slots: str

    @classmethod
    def parse(cls, line: str) -> NodeLine:
        words = line.split()
        return cls(words[0], words[1], set(words[2].split(",")), words[3], " ".join(words[8:]))


def cluster_nodes(client: NodeClient) -> list[NodeLine]:
    return [NodeLine.parse(line) for line in client.text("CLUSTER", "NODES").splitlines()
            if line.strip()]


# -- the processes --------------------------------------------------------------------------

def usable_cores() -> list[int]:
    """The cores this process may run on (empty where the system cannot say)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


def pinned_core(pid: int) -> str:
    """The one core process ``pid`` may run on, or "-" (not pinned, or no way to know)."""
    try:
        cores = os.sched_getaffinity(pid)
    except (AttributeError, OSError):
        return "-"
    return str(next(iter(cores))) if len(cores) == 1 else "-"


def _libc_prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()
PR_SET_PDEATHSIG = 1


@dataclass
class Node:
    index: int
    port: int
    dir: str
    core: int | None
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    backoff: float = BACKOFF_FIRST_S
    restart_at: float | None = None
    restarts: int = 0

    @property
    def bus_port(self) -> int:
        return self.port + BUS_PORT_OFFSET

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, name: str, lines: int = 15) -> str:
        """The last lines of a file in its directory ("" if none)."""
        try:
            with open(os.path.join(self.dir, name), encoding="utf-8", errors="replace") as fh:
                return "".join(fh.readlines()[-lines:])
        except OSError:
            return ""


class LocalCluster:
    """The N nodes of one launcher (see the module's docstring)."""

    def __init__(self, options: Options, out: Any = None, err: Any = None) -> None:
        self.options = options
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.stopping = False
        base = os.path.abspath(options.dir)
        cores = usable_cores()
        self.nodes = [Node(i, options.port + i, os.path.join(base, str(options.port + i)),
                           cores[i % len(cores)] if cores else None)
                      for i in range(options.nodes)]

    # -- output
    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def warn(self, text: str) -> None:
        print(text, file=self.err, flush=True)

    # -- signals
    def on_signal(self, signum: int, frame: object) -> None:
        self.stopping = True

    def pause(self, seconds: float = POLL_S) -> None:
        """Sleep a moment; raises Stopping once a stop was asked for."""
        if self.stopping:
            raise Stopping
        time.sleep(seconds)
        if self.stopping:
            raise Stopping

    # -- start
    def check_ports(self) -> None:
        """Every client and bus port of the range free on the bind address."""
        for node in self.nodes:
            for port, what in ((node.port, "port"), (node.bus_port, "bus port")):
                family = socket.AF_INET6 if ":" in self.options.host else socket.AF_INET
                with socket.socket(family, socket.SOCK_STREAM) as sock:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    try:
                        sock.bind((self.options.host, port))
                    except OSError as exc:
                        raise LauncherError(
                            f"{what} {port} (node {node.index + 1} of {len(self.nodes)}, "
                            f"ports {self.nodes[0].port}-{self.nodes[-1].port}, bus ports "
                            f"{self.nodes[0].bus_port}-{self.nodes[-1].bus_port}) is not free "
                            f"on {self.options.host}: {exc.strerror}") from None

    def node_argv(self, node: Node) -> list[str]:
        """The command line of ``node``: the config file, a log file in its
        directory (an option given overrides it), the options given, then
        the ones the launcher decides."""
        return [sys.executable, "-m", "tidelog.server.main",
                *([self.options.config_file] if self.options.config_file else []),
                "--logfile", LOG_FILE, *self.options.node_args,
                "--port", str(node.port), "--dir", node.dir,
                "--cluster-enabled", "yes", "--daemonize", "no"]

    def spawn(self, node: Node) -> None:
        """Start ``node``'s process (its output, if any, goes to OUTPUT_FILE)."""
        os.makedirs(node.dir, exist_ok=True)
        core = node.core

        def in_child() -> None:  # between fork and exec
            if _PRCTL is not None:
                _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the launcher gone: stop
            if core is not None:
                try:
                    os.sched_setaffinity(0, {core})
                except OSError:
                    pass

        with open(os.path.join(node.dir, OUTPUT_FILE), "ab") as output:
            node.proc = subprocess.Popen(self.node_argv(node), stdin=subprocess.DEVNULL,
                                         stdout=output, stderr=subprocess.STDOUT,
                                         preexec_fn=in_child)
        node.started_at = time.monotonic()
        node.restart_at = None

    def start(self) -> None:
        self.check_ports()
        for node in self.nodes:
            self.spawn(node)
        for node in self.nodes:
            self.wait_ready(node)

    def wait_ready(self, node: Node) -> None:
        deadline = time.monotonic() + READY_WAIT_S
        while True:
            assert node.proc is not None
            if node.proc.poll() is not None:
                raise LauncherError(f"the node on port {node.port} exited with code "
                                    f"{node.proc.returncode} at start:\n"
                                    f"{node.tail(OUTPUT_FILE)}{node.tail(LOG_FILE)}".rstrip())
            try:
                with NodeClient(self.options.host, node.port, timeout=2,
                                password=self.options.password) as client:
                    if client.call("PING") == b"PONG":
                        return
            except (OSError, ReplyError):
                pass
            if time.monotonic() > deadline:
                raise LauncherError(f"the node on port {node.port} did not answer PING "
                                    f"within {READY_WAIT_S:.0f} s")
            self.pause(0.05)

    # -- the cluster
    def client(self, node: Node) -> NodeClient:
        return NodeClient(self.options.host, node.port, password=self.options.password)

    def is_empty(self, node: Node) -> bool:
        """Knows no other node and has no slot (so, no cluster yet)."""
        with self.client(node) as c:
            info = info_fields(c.text("CLUSTER", "INFO"))
        return info.get("cluster_known_nodes") == "1" and info.get("cluster_slots_assigned") == "0"

    def create(self) -> None:
        """``redis-cli --cluster create``'s steps over the nodes (all empty)."""
        nodes = self.nodes
        for node in nodes:
            with self.client(node) as c:
                if c.call("DBSIZE"):
                    raise LauncherError(
                        f"the node on port {node.port} holds keys but is in no cluster: "
                        f"not creating one (empty {node.dir}, or start it alone)")
        ids = []
        for node in nodes:
            with self.client(node) as c:
                ids.append(c.text("CLUSTER", "MYID"))
        masters = masters_count(len(nodes), self.options.replicas)
        ranges = split_slots(masters)
        master_of = assign_replicas(len(nodes), self.options.replicas)
        self.say(f">>> Creating a cluster of {len(nodes)} nodes: {masters} master(s), "
                 f"{self.options.replicas} replica(s) each")
        for node, (first, last) in zip(nodes, ranges):
            with self.client(node) as c:
                c.call("CLUSTER", "ADDSLOTSRANGE", first, last)
        for epoch, node in enumerate(nodes, 1):
            with self.client(node) as c:
                c.call("CLUSTER", "SET-CONFIG-EPOCH", epoch)
        for node in nodes[1:]:
            with self.client(node) as c:
                c.call("CLUSTER", "MEET", self.options.host, nodes[0].port)
        self.wait_all_known(ids)
        for node, master in zip(nodes, master_of):
            if master is not None:
                with self.client(node) as c:
                    c.call("CLUSTER", "REPLICATE", ids[master])

    def wait_all_known(self, ids: list[str]) -> None:
        """Until every node lists every other by its id, out of handshake."""
        deadline = time.monotonic() + JOIN_WAIT_S
        want = set(ids)
        while True:
            known = True
            for node in self.nodes:
                try:
                    with self.client(node) as c:
                        seen = {n.id for n in cluster_nodes(c) if "handshake" not in n.flags}
                except (OSError, ReplyError):
                    seen = set()
                if not want <= seen:
                    known = False
                    break
            if known:
                return
            if time.monotonic() > deadline:
                raise LauncherError(f"the nodes did not all meet within {JOIN_WAIT_S:.0f} s")
            self.pause(0.2)

    def views(self, nodes: list[Node]) -> tuple[list[frozenset[tuple[str, str, str]]], list[str]]:
        """Per node: its CLUSTER NODES as (id, master, slots), and its cluster_state."""
        views, states = [], []
        for node in nodes:
            try:
                with self.client(node) as c:
                    lines = cluster_nodes(c)
                    states.append(info_fields(c.text("CLUSTER", "INFO")).get("cluster_state", "?"))
            except (OSError, ReplyError):
                lines = []
                states.append("down")
            views.append(frozenset((n.id, n.master, n.slots) for n in lines))
        return views, states

    def wait_ok(self, size: int | None, nodes: list[Node] | None = None) -> bool:
        """Until every node (of ``nodes``, else all) says cluster_state:ok and
        all agree (and list ``size`` nodes, when given); False after JOIN_WAIT_S."""
        deadline = time.monotonic() + JOIN_WAIT_S
        while True:
            views, states = self.views(self.nodes if nodes is None else nodes)
            if (all(s == "ok" for s in states) and all(v == views[0] for v in views)
                    and (size is None or len(views[0]) == size)):
                return True
            if time.monotonic() > deadline:
                return False
            self.pause(0.2)

    def table(self) -> list[str]:
        """One line per node: port, bus port, role, slots, pid, core, directory."""
        rows = [("port", "bus", "role", "slots", "pid", "core", "dir")]
        for node in self.nodes:
            role, slots = "down", "-"
            try:
                with self.client(node) as c:
                    lines = cluster_nodes(c)
                me = next(n for n in lines if "myself" in n.flags)
                role = "master" if "master" in me.flags else "replica"
                slots = me.slots or "-"
                if role == "replica":  # (of <its master's port>)
                    master = next((n.address for n in lines if n.id == me.master), "?:?")
                    slots = f"(of {master.split('@')[0].rsplit(':', 1)[-1]})"
            except (OSError, ReplyError, StopIteration):
                pass
            rows.append((str(node.port), str(node.bus_port), role, slots,
                         str(node.proc.pid) if node.proc else "-",
                         pinned_core(node.proc.pid) if node.proc else "-",
                         os.path.relpath(node.dir) if not os.path.relpath(node.dir).startswith("..")
                         else node.dir))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]

    def form(self) -> None:
        """Create the cluster, or find it formed, and wait until it is ok."""
        empty = [node for node in self.nodes if self.is_empty(node)]
        formed = len(empty) == 0
        if not self.options.create:
            if empty:
                self.say(f">>> {len(empty)} empty node(s) started without creating a cluster "
                         f"(--cluster-create no): add them with redis-cli --cluster add-node")
            if len(empty) < len(self.nodes):  # the others came back from their nodes.conf
                self.wait_ok(None, [node for node in self.nodes if node not in empty])
            return
        members = self.nodes  # the nodes that are (or are made) one cluster
        if len(empty) == len(self.nodes):
            self.create()
            ok = self.wait_ok(len(self.nodes))
        elif formed:
            self.say(">>> The nodes are in a cluster already (their nodes.conf): not creating one")
            ok = self.wait_ok(None)
        else:
            self.warn("warning: the nodes on ports " + ", ".join(str(n.port) for n in empty)
                      + " are empty while the others are in a cluster: not creating one "
                      "(add them with redis-cli --cluster add-node)")
            members = [node for node in self.nodes if node not in empty]
            ok = self.wait_ok(None, members)
        if ok:
            self.say(f">>> cluster_state:ok on "
                     f"{'all ' if members is self.nodes else ''}{len(members)} nodes")
        else:
            self.warn(f"warning: the nodes do not all say cluster_state:ok and agree after "
                      f"{JOIN_WAIT_S:.0f} s; going on")

    # -- watch and stop
    def supervise(self) -> None:
        """Restart nodes that exit, until a stop is asked for."""
        while True:
            if self.stopping:  # before looking: a Ctrl-C stops the nodes too
                raise Stopping
            now = time.monotonic()
            for node in self.nodes:
                if node.restart_at is None and not node.alive():
                    assert node.proc is not None
                    if now - node.started_at >= STABLE_S:
                        node.backoff = BACKOFF_FIRST_S
                    node.restart_at = now + node.backoff
                    self.warn(f"node {node.port} exited with code {node.proc.returncode}; "
                              f"starting it again in {node.backoff:g} s")
                    node.backoff = min(node.backoff * 2, BACKOFF_MAX_S)
                elif node.restart_at is not None and now >= node.restart_at:
                    self.spawn(node)
                    node.restarts += 1
                    assert node.proc is not None
                    self.say(f"node {node.port} started again (pid {node.proc.pid})")
            self.pause()

    def stop(self) -> None:
        """SIGTERM to every node, then SIGKILL to those still running after STOP_WAIT_S."""
        living = [n for n in self.nodes if n.alive()]
        for node in living:
            assert node.proc is not None
            try:
                node.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_WAIT_S
        while any(n.alive() for n in living) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        for node in living:
            if node.alive():
                assert node.proc is not None
                self.warn(f"node {node.port} still running after {STOP_WAIT_S:.0f} s: SIGKILL")
                node.proc.kill()
        for node in self.nodes:
            if node.proc is not None:
                node.proc.wait()

    def run(self) -> int:
        """Start, form, print, supervise until SIGINT/SIGTERM, stop: the exit code."""
        previous = {sig: signal.signal(sig, self.on_signal)
                    for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            try:
                self.start()
                self.form()
                self.say("\n".join(self.table()))
                self.say(f">>> Ready: redis-cli -c -p {self.nodes[0].port}; "
                         f"Ctrl-C stops the {len(self.nodes)} nodes")
                self.supervise()
            except Stopping:
                self.say(f">>> Stopping {len(self.nodes)} nodes")
                self.stop()
                self.say(">>> All nodes stopped")
                return 0
            except (LauncherError, ReplyError, OSError) as exc:  # a node's error reply, or gone
                self.warn(f"error: {exc}")
                self.stop()
                return 1
            except BaseException:
                self.stop()
                raise
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0


def wants_launcher(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for the launcher (it names --cluster-local)."""
    return any(arg.split()[0].lower() == "--cluster-local" for arg in argv
               if arg.startswith("--") and arg.split())


def main(argv: Sequence[str]) -> int:
    """``tidelog-server --cluster-local ...``: the exit code."""
    if "--help" in argv or "-h" in argv:
        print(USAGE)
        return 0
    try:
        options = parse_args(argv)
    except LauncherError as exc:
        print(f"error: {exc}\n\n{USAGE}", file=sys.stderr)
        return 1
    return LocalCluster(options).run()
