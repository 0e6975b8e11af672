"""Fixtures the integration tests share."""

from __future__ import annotations

import pytest

from tidelog.server.embed import EmbeddedServer


@pytest.fixture
def tidelog_srv(tmp_path):
    """A Tidelog server in-process on a free port, data in ``tmp_path/tidelog``,
    no snapshots of its own; stopped whatever the test did."""
    srv = EmbeddedServer(port=0, save="", dir=str(tmp_path / "tidelog")).start()
    yield srv
    srv.stop()


@pytest.fixture
def embedded(tmp_path):
    """Start extra servers with their own options; all stopped afterwards,
    and none may have logged an internal error."""
    started: list[EmbeddedServer] = []

    def start(**options) -> EmbeddedServer:
        options.setdefault("dir", str(tmp_path))
        srv = EmbeddedServer(**options).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()
        assert srv.engine.internal_errors == 0, "the server logged internal errors"
