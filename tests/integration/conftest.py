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
