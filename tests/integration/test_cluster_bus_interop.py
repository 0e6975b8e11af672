"""The bus codec against real cluster nodes: redis-server 7.0.15 and valkey-server 9.1
each meet a node played by this test over a plain socket (every frame written
by tidelog.cluster.bus.encode, every frame read cut by FrameReader and read by
decode), and then list it in CLUSTER NODES under the name it sent, connected,
with its ports, hostname extension and slots."""

from __future__ import annotations

import random
import selectors
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.support.cluster import free_pair, valkey_server
from tests.support.redis_oracle import REDIS_SERVER
from tidelog.cluster import messages as m
from tidelog.cluster.bus import FrameReader, decode, encode
from tidelog.cluster.messages import Extension, Message, bitmap_of

WAIT_S = 20.0


BINARIES = {"redis": REDIS_SERVER, "valkey": valkey_server()}


def start_node(processes, binary: str, workdir: Path) -> tuple[int, redis.Redis]:
    port = free_pair()
    workdir.mkdir()
    processes.popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no", "--dir", str(workdir), "--cluster-enabled", "yes",
                     "--cluster-config-file", str(workdir / "nodes.conf"),
                     "--cluster-node-timeout", "5000", "--logfile", str(workdir / "server.log")],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    stdin=subprocess.DEVNULL)
    client = redis.Redis(port=port, socket_timeout=5, decode_responses=True)
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            client.ping()
            return port, client
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class PlayedNode:
    """A listening bus socket that answers each PING and MEET with an encoded PONG."""

    def __init__(self) -> None:
        self.port = free_pair()
        self.name = bytes(random.choice(b"0123456789abcdef") for _ in range(40))
        self.sel = selectors.DefaultSelector()
        self.listener = socket.create_server(("127.0.0.1", self.port + 10000))
        self.sel.register(self.listener, selectors.EVENT_READ, None)
        self.received: list[Message] = []

    def pong(self) -> bytes:
        return encode(Message(m.PONG, self.name, port=self.port, cport=self.port + 10000,
                              flags=m.MYSELF | m.MASTER, myslots=bitmap_of(range(100, 200)),
                              config_epoch=1, current_epoch=1,
                              extensions=[Extension(m.EXT_HOSTNAME, b"played.example")]))

    def pump(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for key, _ in self.sel.select(0.05):
                if key.data is None:
                    conn, _ = self.listener.accept()
                    self.sel.register(conn, selectors.EVENT_READ, FrameReader())
                    continue
                conn = key.fileobj
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
                    self.received.append(msg)
                    if msg.type in (m.PING, m.MEET):
                        conn.sendall(self.pong())

    def close(self) -> None:
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()
        self.sel.close()


@pytest.mark.parametrize("impl", ["redis", "valkey"])
def test_real_node_meets_a_node_encoded_by_the_codec(impl, processes, tmp_path):
    binary = BINARIES[impl]
    if binary is None:
        pytest.skip(f"{impl} server not installed")
    port, client = start_node(processes, binary, tmp_path / impl)
    real_id = client.execute_command("CLUSTER", "MYID")
    played = PlayedNode()
    try:
        check_meet(client, played, port, real_id)
    finally:
        played.close()
        client.close()


def check_meet(client: redis.Redis, played: PlayedNode, port: int, real_id: str) -> None:
    client.execute_command("CLUSTER", "MEET", "127.0.0.1", played.port)
    name = played.name.decode()
    line = ""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        played.pump(0.2)
        lines = [x for x in client.execute_command("CLUSTER", "NODES").splitlines()
                 if x.startswith(name)]
        # The hostname extension is read from the first PONG after the handshake's.
        if lines and " connected" in lines[0] and "played.example" in lines[0]:
            line = lines[0]
            break
    assert line, client.execute_command("CLUSTER", "NODES")
    # <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slots>
    fields = line.split()
    assert fields[1] == f"127.0.0.1:{played.port}@{played.port + 10000},played.example"
    assert fields[2] == "master" and fields[3] == "-"
    assert fields[6] == "1" and fields[7] == "connected" and fields[8:] == ["100-199"]
    # And the real node's frames, read back by the codec, came from it.
    assert played.received[0].type == m.MEET
    assert {msg.sender.decode() for msg in played.received} == {real_id}
    assert all(msg.port == port and msg.cport == port + 10000 for msg in played.received)
