"""Shared fixtures: a Tidelog server (embedded, on a free port), redis-py
clients (sync, RESP2 and RESP3), raw-byte clients, and the reference
redis-server for differential tests."""

from __future__ import annotations

import os

import pytest
import redis
from hypothesis import settings

from tests.support.processes import STARTED, ProcessGroup, RedisServer, stop
from tests.support.rawclient import RawClient
from tests.support.redis_oracle import REDIS_SERVER
from tidelog import kernels
from tidelog.server.embed import EmbeddedServer

# No time limit per example: a deadline is a timed assertion, and fails on a
# busy machine (two test passes share two cores) however right the code is.
# The same examples on every run (derandomize): a property test passes or
# fails for the code, not for the seed.  TIDELOG_HYPOTHESIS=explore draws new
# examples on each run, to look for new failures (pin each one found with
# @example).
settings.register_profile("tidelog", deadline=None, derandomize=True)
settings.register_profile("explore", deadline=None, derandomize=False)
settings.load_profile("explore" if os.environ.get("TIDELOG_HYPOTHESIS") == "explore"
                      else "tidelog")


def pytest_report_header(config: pytest.Config) -> list[str]:
    # Which twin of the kernels this run tests (make test runs two passes).
    lines = [kernels.describe()]
    if REDIS_SERVER:
        lines.append(f"differential tests: against {REDIS_SERVER}")
    else:
        lines.append("differential tests: SKIPPED, redis-server is not installed "
                     "(run `make test` as root to install it)")
    return lines


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A process still running now was started by a test that did not stop it."""
    leaked = [proc for proc in list(STARTED) if proc.poll() is None]
    for proc in leaked:
        stop(proc)
    if leaked:
        names = ", ".join(" ".join(map(str, proc.args[:3])) for proc in leaked)
        print(f"\nerror: {len(leaked)} process(es) left running by the tests: {names}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def processes(tmp_path):
    """Start servers with ``processes.tidelog(...)``/``.redis(...)``/``.popen(...)``;
    whatever still runs is killed when the test ends, however it ends."""
    group = ProcessGroup(tmp_path)
    yield group
    group.stop_all()


@pytest.fixture(scope="module")
def server():
    """A Tidelog server shared by one test module; flushed between tests."""
    srv = EmbeddedServer(port=0).start()
    yield srv
    srv.stop()
    assert srv.engine.internal_errors == 0, "the server logged internal errors"


@pytest.fixture
def tidelog(server):
    """The module's server, emptied and with default settings for this test."""
    def reset() -> None:
        for db in server.engine.dbs:
            db.flush()
        server.engine.config.set("stream-node-max-entries", "100")
        server.engine.config.set("stream-node-max-bytes", "4096")
    server.call(reset)
    return server


@pytest.fixture
def r(tidelog):
    client = redis.Redis(port=tidelog.port, protocol=2)
    yield client
    client.close()


@pytest.fixture
def r3(tidelog):
    client = redis.Redis(port=tidelog.port, protocol=3)
    yield client
    client.close()


@pytest.fixture
def raw(tidelog):
    client = RawClient(tidelog.port)
    yield client
    client.close()


@pytest.fixture(scope="session")
def oracle_server():
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed: differential tests skipped "
                    "(`make test` installs it when run as root)")
    srv = RedisServer()
    yield srv
    srv.stop()
