"""The cluster bus over TLS (``tls-cluster yes``): three Tidelog nodes made
into a cluster by ``redis-cli --tls --cluster create``, Tidelog beside
redis-server 7.0.15 on one TLS bus, the ports clients are given (the TLS
port to a TLS client, the plain one to a plain client, as redis-server
answers), and a plain peer that cannot join a TLS bus.

Every process goes through the ``processes`` fixture (killed in its
finaliser); every wait is bounded."""

from __future__ import annotations

import asyncio
import random
import socket
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import ClusterNode as PyClusterNode
from redis.cluster import RedisCluster

from tests.support.certs import OPENSSL, make_certs
from tests.support.cluster import REDIS_CLI, cluster_args, free_pair, wait_ping
from tests.support.redis_oracle import REDIS_SERVER
from tests.support.waits import wait_until

pytestmark = [pytest.mark.skipif(OPENSSL is None, reason="the openssl command is not installed"),
              pytest.mark.skipif(REDIS_CLI is None, reason="redis-cli is not installed")]

WAIT_S = 60.0


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def free_plain_port() -> int:
    """A free port outside free_pair's range (so the two never collide)."""
    for _ in range(200):
        port = random.randint(40000, 50000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port")


@dataclass
class Node:
    kind: str
    port: int       # plain
    tls_port: int   # its bus port is tls_port + 10000
    workdir: Path
    certs: object

    def plain(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=10, decode_responses=True)

    def tls(self) -> redis.Redis:
        c = self.certs
        return redis.Redis(port=self.tls_port, ssl=True, ssl_ca_certs=str(c.ca),
                           ssl_certfile=str(c.client_cert), ssl_keyfile=str(c.client_key),
                           socket_timeout=10, decode_responses=True)

    def log(self) -> str:
        try:
            return (self.workdir / "server.log").read_text(errors="replace")
        except OSError:
            return ""


def tls_args(certs, tls_port: int) -> list[str]:
    # The server's certificate is for serving (serverAuth): the links this
    # node opens present the client certificate (tls-client-cert-file).
    return ["--tls-port", str(tls_port), "--tls-cluster", "yes", "--tls-replication", "yes",
            "--tls-cert-file", str(certs.server_cert), "--tls-key-file", str(certs.server_key),
            "--tls-ca-cert-file", str(certs.ca),
            "--tls-client-cert-file", str(certs.client_cert),
            "--tls-client-key-file", str(certs.client_key)]


class Nodes:
    def __init__(self, processes, tmp_path: Path, certs) -> None:
        self.processes, self.tmp_path, self.certs = processes, tmp_path, certs
        self.nodes: list[Node] = []

    def _new(self, kind: str, tls: bool) -> tuple[Node, list[str]]:
        workdir = self.tmp_path / f"{kind}-{len(self.nodes)}"
        workdir.mkdir()
        if tls:
            plain, tls_port = free_plain_port(), free_pair()
        else:
            plain, tls_port = free_pair(), 0
        args = cluster_args(plain, workdir) + (tls_args(self.certs, tls_port) if tls else [])
        node = Node(kind, plain, tls_port, workdir, self.certs)
        self.nodes.append(node)
        return node, args

    def tidelog(self, tls: bool = True, *extra: str) -> Node:
        node, args = self._new("tidelog", tls)
        self.processes.tidelog(args + list(extra), port=node.port)
        return node

    def redis(self, tls: bool = True) -> Node:
        if REDIS_SERVER is None:
            pytest.skip("redis-server is not installed")
        node, args = self._new("redis", tls)
        proc = self.processes.popen([REDIS_SERVER, *args], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        wait_ping(node.port, proc)
        return node

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        c = self.certs
        return subprocess.run([REDIS_CLI, "--tls", "--cacert", str(c.ca), "--cert",
                               str(c.client_cert), "--key", str(c.client_key), *args],
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    def create(self) -> None:
        result = self.cli("--cluster", "create",
                          *(f"127.0.0.1:{n.tls_port}" for n in self.nodes), "--cluster-yes")
        assert result.returncode == 0, result.stdout + result.stderr + self.diagnostics()
        assert "[OK] All 16384 slots covered." in result.stdout

    def diagnostics(self) -> str:
        return "\n".join(f"--- {n.kind} {n.port}/{n.tls_port}\n{n.log()[-3000:]}"
                         for n in self.nodes)

    def wait_ok(self) -> None:
        """Until every node lists every node, connected, with the same slots
        as the others do, and says cluster_state:ok."""
        def ok() -> bool:
            views = []
            for node in self.nodes:
                c = node.plain()
                if "cluster_state:ok" not in c.execute_command("CLUSTER", "INFO"):
                    return False
                lines = c.execute_command("CLUSTER", "NODES").strip().splitlines()
                if len(lines) != len(self.nodes) or \
                        any(" connected" not in line for line in lines):
                    return False
                views.append({(line.split()[0], " ".join(line.split()[8:])) for line in lines})
            return all(view == views[0] for view in views)
        try:
            wait_until(ok, timeout=WAIT_S)
        except AssertionError:
            raise AssertionError("the cluster did not form over TLS\n" + self.diagnostics()
                                 ) from None


@pytest.fixture
def nodes(processes, tmp_path, certs):
    return Nodes(processes, tmp_path, certs)


def slot_ports(reply) -> set[int]:
    """The ports of every node CLUSTER SLOTS gives."""
    return {entry[1] for row in reply for entry in row[2:]}


def node_ports(text: str) -> set[int]:
    return {int(line.split()[1].split("@")[0].rsplit(":", 1)[1])
            for line in text.strip().splitlines()}


def as_map(value) -> dict:
    """A map of a reply (redis-py gives CLUSTER SHARDS' as dicts already)."""
    if isinstance(value, dict):
        return value
    return dict(zip(value[::2], value[1::2], strict=True))


def tls_cluster_client(node: Node) -> RedisCluster:
    c = node.certs
    return RedisCluster(startup_nodes=[PyClusterNode("127.0.0.1", node.tls_port)], ssl=True,
                        ssl_ca_certs=str(c.ca), ssl_certfile=str(c.client_cert),
                        ssl_keyfile=str(c.client_key), decode_responses=True, socket_timeout=10)


def bus_handshake(node: Node, with_cert: bool) -> str:
    """A TLS connection to the node's bus port: "ok" once the peer took it
    (TLS 1.3 refuses a missing certificate after the handshake: the first
    read then fails or ends), else "refused"."""
    c = node.certs
    ctx = ssl.create_default_context(cafile=str(c.ca))
    ctx.check_hostname = False
    if with_cert:
        ctx.load_cert_chain(str(c.client_cert), str(c.client_key))
    try:
        with socket.create_connection(("127.0.0.1", node.tls_port + 10000), timeout=10) as raw:
            with ctx.wrap_socket(raw) as sock:
                sock.settimeout(1.0)
                try:
                    data = sock.recv(1)
                except TimeoutError:  # nothing to read, still open: taken
                    return "ok"
                return "ok" if data else "refused"
    except (ssl.SSLError, OSError):
        return "refused"


def check_client_ports(nodes: Nodes) -> None:
    """Every node gives TLS clients the TLS ports and plain clients the plain
    ones (CLUSTER SLOTS, CLUSTER NODES, -MOVED); CLUSTER SHARDS gives both."""
    tls_ports = {n.tls_port for n in nodes.nodes}
    plain_ports = {n.port for n in nodes.nodes}
    for node in nodes.nodes:
        assert slot_ports(node.tls().execute_command("CLUSTER", "SLOTS")) == tls_ports
        assert slot_ports(node.plain().execute_command("CLUSTER", "SLOTS")) == plain_ports
        assert node_ports(node.tls().execute_command("CLUSTER", "NODES")) == tls_ports
        assert node_ports(node.plain().execute_command("CLUSTER", "NODES")) == plain_ports
        shards = node.plain().execute_command("CLUSTER", "SHARDS")
        pairs = set()
        for shard in shards:
            shard = as_map(shard)
            for entry in shard["nodes"]:
                entry = as_map(entry)
                pairs.add((entry["port"], entry["tls-port"]))
        assert pairs == {(n.port, n.tls_port) for n in nodes.nodes}
        # a key another node serves: -MOVED names that node's port of the client's kind
        key = next(k for k in "abcdefghij" if raw(node, False, k).startswith(b"-MOVED"))
        moved = raw(node, False, key).decode()
        _, slot, address = moved.split()
        other = next(n for n in nodes.nodes if n.port == int(address.rsplit(":", 1)[1]))
        assert other is not node
        assert raw(node, True, key).decode() == f"-MOVED {slot} 127.0.0.1:{other.tls_port}"


def raw(node: Node, tls: bool, key: str) -> bytes:
    """GET key's reply line, as the bytes the node sent (plain or TLS port)."""
    sock = socket.create_connection(("127.0.0.1", node.tls_port if tls else node.port),
                                    timeout=10)
    if tls:
        c = node.certs
        ctx = ssl.create_default_context(cafile=str(c.ca))
        ctx.check_hostname = False
        ctx.load_cert_chain(str(c.client_cert), str(c.client_key))
        sock = ctx.wrap_socket(sock)
    with sock:
        sock.sendall(b"GET %s\r\n" % key.encode())
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = sock.recv(4096)
            assert chunk, data
            data += chunk
    return data[:-2]


@pytest.mark.long
def test_three_tidelog_nodes_over_tls(nodes):
    for _ in range(3):
        nodes.tidelog()
    nodes.create()
    nodes.wait_ok()
    check = nodes.cli("--cluster", "check", f"127.0.0.1:{nodes.nodes[0].tls_port}")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "[OK] All nodes agree about slots configuration." in check.stdout
    # the bus port speaks TLS, and takes a peer with a certificate the CA signed
    for node in nodes.nodes:
        assert bus_handshake(node, with_cert=True) == "ok"
        assert bus_handshake(node, with_cert=False) == "refused"
    check_client_ports(nodes)
    with tls_cluster_client(nodes.nodes[0]) as rc:
        for i in range(30):
            rc.set(f"key:{i}", str(i))
        assert [rc.get(f"key:{i}") for i in range(30)] == [str(i) for i in range(30)]
    # resharding moves keys with MIGRATE to the TLS ports, over TLS
    first, second = (n.plain().execute_command("CLUSTER", "MYID") for n in nodes.nodes[:2])
    sizes = [n.plain().dbsize() for n in nodes.nodes]
    moved = nodes.cli("--cluster", "reshard", f"127.0.0.1:{nodes.nodes[0].tls_port}",
                      "--cluster-from", first, "--cluster-to", second,
                      "--cluster-slots", "2000", "--cluster-yes")
    assert moved.returncode == 0, moved.stdout + moved.stderr + nodes.diagnostics()
    nodes.wait_ok()
    after = [n.plain().dbsize() for n in nodes.nodes]
    assert after[0] < sizes[0] and after[1] > sizes[1] and sum(after) == sum(sizes) == 30
    with tls_cluster_client(nodes.nodes[2]) as rc:
        assert [rc.get(f"key:{i}") for i in range(30)] == [str(i) for i in range(30)]
    for node in nodes.nodes:
        assert node.plain().ping() is True


def test_tidelog_and_redis_server_on_one_tls_bus(nodes):
    """2 Tidelog + 1 redis-server 7.0.15, every bus link TLS; the ports each
    gives clients are redis-server's."""
    nodes.tidelog()
    nodes.redis()
    nodes.tidelog()
    nodes.create()
    nodes.wait_ok()
    check_client_ports(nodes)
    redis_node = next(n for n in nodes.nodes if n.kind == "redis")
    for node in nodes.nodes:
        if node is redis_node:
            continue
        for client in ("plain", "tls"):
            ours = getattr(node, client)().execute_command("CLUSTER", "SLOTS")
            theirs = getattr(redis_node, client)().execute_command("CLUSTER", "SLOTS")
            assert [[row[0], row[1]] + [entry[:3] for entry in row[2:]] for row in ours] == \
                [[row[0], row[1]] + [entry[:3] for entry in row[2:]] for row in theirs]
    with tls_cluster_client(redis_node) as rc:
        for i in range(30):
            rc.set(f"key:{i}", str(i))
        assert [rc.get(f"key:{i}") for i in range(30)] == [str(i) for i in range(30)]
    tidelog_node = nodes.nodes[0]
    c = tidelog_node.certs

    async def over_asyncio() -> list[str | None]:
        rc = AsyncRedisCluster(host="127.0.0.1", port=tidelog_node.tls_port, ssl=True,
                               ssl_ca_certs=str(c.ca), ssl_certfile=str(c.client_cert),
                               ssl_keyfile=str(c.client_key), decode_responses=True,
                               protocol=3)
        try:
            for i in range(30):
                await rc.set(f"async:{i}", str(i))
            return [await rc.get(f"key:{i}") for i in range(30)]
        finally:
            await rc.aclose()

    assert asyncio.run(over_asyncio()) == [str(i) for i in range(30)]


def node_count(node: Node) -> int:
    return len(node.plain().execute_command("CLUSTER", "NODES").strip().splitlines())


@pytest.mark.long
@pytest.mark.parametrize("plain_kind", ["tidelog", "redis"])
def test_a_plain_peer_cannot_join_a_tls_bus(nodes, plain_kind):
    """MEET from a node whose bus is plain TCP: its link fails the TLS
    node's handshake, it drops the node it met at the end of the handshake
    time (Redis's rule) and the TLS node never lists it; the other way
    round alike; both keep serving."""
    secure = nodes.tidelog()
    plain = getattr(nodes, plain_kind)(tls=False)
    assert plain.plain().execute_command(
        "CLUSTER", "MEET", "127.0.0.1", str(secure.tls_port), str(secure.tls_port + 10000)
    ) == "OK"
    assert node_count(plain) == 2  # in handshake
    wait_until(lambda: node_count(plain) == 1, timeout=WAIT_S)
    assert node_count(secure) == 1
    assert secure.plain().execute_command(
        "CLUSTER", "MEET", "127.0.0.1", str(plain.port), str(plain.port + 10000)) == "OK"
    assert node_count(secure) == 2
    wait_until(lambda: node_count(secure) == 1, timeout=WAIT_S)
    assert node_count(plain) == 1
    assert secure.plain().ping() is True
    assert secure.tls().ping() is True
    assert plain.plain().ping() is True


def test_config_set_tls_cluster_reaches_the_bus(processes, tmp_path, certs):
    """CONFIG SET tls-cluster: the bus listener serves TLS from the next
    tick on, on the port it listens on, and plain TCP again when switched
    off; the node then announces its TLS port (a TLS client sees it)."""
    port, tls_port = free_pair(), free_plain_port()
    workdir = tmp_path / "node"
    workdir.mkdir()
    processes.tidelog(cluster_args(port, workdir) + tls_args(certs, tls_port)
                      + ["--tls-cluster", "no"], port=port)
    node = Node("tidelog", port, tls_port, workdir, certs)
    bus = Node("tidelog", port, port, workdir, certs)  # its bus: port + 10000
    assert bus_handshake(bus, with_cert=True) == "refused"
    assert node.plain().config_set("tls-cluster", "yes") is True
    wait_until(lambda: bus_handshake(bus, with_cert=True) == "ok", timeout=WAIT_S)
    assert bus_handshake(bus, with_cert=False) == "refused"
    wait_until(lambda: node_ports(node.tls().execute_command("CLUSTER", "NODES")) == {tls_port},
               timeout=WAIT_S)
    assert node_ports(node.plain().execute_command("CLUSTER", "NODES")) == {port}
    # a script's call is on no connection: the TLS port, as redis-server 7.0.15 answers
    assert node_ports(node.plain().eval("return redis.call('cluster', 'nodes')", 0)) == \
        {tls_port}
    assert node.plain().config_set("tls-cluster", "no") is True
    wait_until(lambda: bus_handshake(bus, with_cert=True) == "refused", timeout=WAIT_S)
    assert node_ports(node.tls().execute_command("CLUSTER", "NODES")) == {port}
    assert node.plain().ping() is True


@pytest.mark.long
def test_a_tidelog_replica_of_a_redis_server_master_over_tls(nodes):
    """CLUSTER REPLICATE on a TLS bus: the replica follows its master on the
    announced (TLS) port with tls-replication, and gets its keys."""
    nodes.tidelog()
    nodes.tidelog()
    master = nodes.redis()
    nodes.create()
    nodes.wait_ok()
    replica = nodes.tidelog()
    assert replica.plain().execute_command(
        "CLUSTER", "MEET", "127.0.0.1", str(master.tls_port), str(master.tls_port + 10000)
    ) == "OK"
    nodes.wait_ok()
    master_id = master.plain().execute_command("CLUSTER", "MYID")
    assert replica.plain().execute_command("CLUSTER", "REPLICATE", master_id) == "OK"
    wait_until(lambda: replica.plain().info("replication")["master_link_status"] == "up",
               timeout=WAIT_S)
    assert replica.plain().info("replication")["master_port"] == master.tls_port
    with tls_cluster_client(nodes.nodes[0]) as rc:
        for i in range(50):
            rc.set(f"r:{i}", str(i))
    held = master.plain().dbsize()
    assert held > 0
    wait_until(lambda: replica.plain().dbsize() == held, timeout=WAIT_S)
    nodes.wait_ok()
