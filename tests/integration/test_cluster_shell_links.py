"""The cluster shell's sockets against a real redis-server 7.0.15 node.

The shell (tidelog.server.cluster_bus.ClusterShell) is driven here by a
scripted state that answers as a node does in the handshake (MEET out, PONG
to every PING and MEET in): what is under test is the shell's part, that
Connect opens a link and reports it, that Send's frames arrive whole and
are understood by Redis, that inbound frames are cut, decoded and handed
over per link, that a link that cannot be made is reported failed, that a
peer sending what is not a bus frame loses its link and no other, and that
SaveConfig writes the file."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

import pytest

from tests.support.cluster import ClusterNodes, free_pair
from tests.support.redis_oracle import REDIS_SERVER
from tidelog.cluster import messages as m
from tidelog.cluster.actions import Connect, SaveConfig, Send
from tidelog.cluster.messages import Message, bitmap_of
from tidelog.cluster.nodes import Node
from tidelog.config import Config
from tidelog.server.cluster_bus import ClusterShell
from tidelog.server.cluster_config import lock_config

WAIT_S = 20.0


class ScriptedState:
    """The handshake as a node plays it, and a record of what the shell reported."""

    def __init__(self, name: bytes, port: int) -> None:
        self.name, self.port = name, port
        self.outbox: list = []
        self.events: list[tuple] = []
        self.received: list[tuple[bool, int, bytes]] = []
        self.local_ips: list[bytes] = []

    def drain(self) -> list:
        out, self.outbox = self.outbox, []
        return out

    def header(self, kind: int) -> Message:
        return Message(kind, self.name, port=self.port, cport=self.port + 10000,
                       flags=m.MYSELF | m.MASTER, myslots=bitmap_of(range(100, 200)),
                       config_epoch=1, current_epoch=1)

    def on_link_connected(self, link, now: int) -> None:
        self.events.append(("connected", link.inbound))
        self.local_ips.append(link.local_ip)
        if not link.inbound:
            self.outbox.append(Send(link, self.header(m.MEET)))

    def on_link_failed(self, node, now: int) -> None:
        self.events.append(("failed", node.name))

    def on_link_closed(self, link, now: int) -> None:
        self.events.append(("closed", link.inbound, link.peer_ip))

    def on_message(self, link, msg: Message, now: int) -> None:
        self.received.append((link.inbound, msg.type, msg.sender))
        if msg.type in (m.PING, m.MEET):
            self.outbox.append(Send(link, self.header(m.PONG)))

    def set_repl_offset(self, offset: int) -> None:
        pass

    def on_tick(self, now: int) -> None:
        pass


class Engine:
    """What the shell reads of an engine for links and the timer."""

    def __init__(self) -> None:
        self.config = Config()
        self.config.set("cluster-node-timeout", "2000")
        self.replication = None


async def until(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT_S} s: {what}")
        await asyncio.sleep(0.05)


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")
def test_links_with_a_real_node(processes, tmp_path):
    real = ClusterNodes(processes, tmp_path).redis()
    real_id = real.node_id()
    port = free_pair()
    name = os.urandom(20).hex().encode()
    conf = tmp_path / "nodes.conf"

    async def scenario() -> None:
        state = ScriptedState(name, port)
        shell = ClusterShell(Engine(), state, str(conf), lock_config(str(conf)),
                             lambda: f"{name.decode()} saved\n")
        await shell.start(["127.0.0.1"], port + 10000)
        try:
            peer = Node(name=b"0" * 40, flags=m.MASTER, ip=b"127.0.0.1", port=real.port,
                        cport=real.port + 10000)
            state.outbox.append(Connect(peer))
            shell.run_actions()
            client = real.client()

            def connected() -> bool:
                lines = [x for x in client.execute_command("CLUSTER", "NODES").splitlines()
                         if x.startswith(name.decode())]
                return bool(lines) and lines[0].split()[7] == "connected"

            await until(connected, "redis-server lists the shell's node connected")
            # Our MEET went out on the outbound link and Redis answered on it;
            # Redis opened its own link to our bus port and pinged on it.
            assert state.events[0] == ("connected", False)
            assert ("connected", True) in state.events
            assert (False, m.PONG, real_id.encode()) in state.received
            assert set(state.local_ips) == {b"127.0.0.1"}
            await until(lambda: (True, m.PING, real_id.encode()) in state.received,
                        "a PING from redis-server on its inbound link")

            # A peer that sends garbage loses its link; the others stay.
            with socket.create_connection(("127.0.0.1", port + 10000)) as junk:
                await until(lambda: ("connected", True) in state.events[2:], "the junk link")
                junk.sendall(b"XXXX" + b"\0" * 4000)
                await until(lambda: any(e[0] == "closed" for e in state.events),
                            "the junk link closed")
            closed = [e for e in state.events if e[0] == "closed"]
            assert closed == [("closed", True, b"127.0.0.1")]
            before = len(state.received)
            await until(lambda: len(state.received) > before, "more frames from redis-server")
            assert connected()

            # A node nobody listens for: reported failed.
            dead = free_pair()
            state.outbox.append(Connect(Node(name=b"1" * 40, flags=m.MASTER, ip=b"127.0.0.1",
                                             port=dead, cport=dead + 10000)))
            shell.run_actions()
            await until(lambda: ("failed", b"1" * 40) in state.events, "the failed connect")

            state.outbox.append(SaveConfig(fsync=True))
            shell.run_actions()
            assert Path(conf).read_text() == f"{name.decode()} saved\n"
        finally:
            await shell.stop()
        with pytest.raises(ConnectionRefusedError):  # nothing listens once stopped
            socket.create_connection(("127.0.0.1", port + 10000), timeout=1).close()

    asyncio.run(scenario())
