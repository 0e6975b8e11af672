"""Spark tests: one local[2] SparkSession for the whole test session, and the servers
its queries talk to - a tidelog-server process and, for the same read and write
paths, Debian's redis-server.

``target`` runs a test once against each server; ``tidelog_target`` only against
Tidelog (for what needs Redis 8 commands).  Each test starts with empty servers.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from tests.support.processes import ProcessGroup
from tests.support.redis_oracle import REDIS_SERVER, free_port

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
_SRC = str(Path(__file__).resolve().parents[2] / "src")
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (_SRC, os.environ.get("PYTHONPATH", "")) if p)

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (tidelog[spark])")


def java_command() -> str | None:
    """The ``java`` Spark will start: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        found = Path(home, "bin", "java")
        return str(found) if found.exists() else None
    return shutil.which("java")


NO_JAVA = ("Java is not installed: the Spark tests need Java 17 or 21 on PATH or in "
           "JAVA_HOME (Debian: apt-get install openjdk-17-jre-headless)")


def pytest_report_header(config: pytest.Config) -> str:
    java = java_command()
    return f"spark tests: with {java}" if java else f"spark tests: SKIPPED, {NO_JAVA}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without Java every Spark test is skipped, with the reason in the summary."""
    if java_command() is not None:
        return
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.skip(reason=NO_JAVA))


@dataclass
class Target:
    """A server the connector talks to."""

    kind: str                # "tidelog" or "redis"
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=30)


@pytest.fixture(scope="session")
def spark():
    from tidelog.spark import local_session

    session = local_session("tidelog-tests", "local[2]", {
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    })
    yield session
    session.stop()


@pytest.fixture(scope="session")
def tidelog_server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tidelog-spark")
    port = free_port()
    group = ProcessGroup(workdir)
    try:
        group.tidelog(["--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir),
                       "--save", ""], port=port)
        yield Target("tidelog", port)
    finally:
        group.stop_all()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (`make test` installs it when run as root)")
    group = ProcessGroup(tmp_path_factory.mktemp("redis-spark"))
    try:
        srv = group.redis()
        yield Target("redis", srv.port)
    finally:
        group.stop_all()


@pytest.fixture(params=["tidelog", "redis"])
def target(request) -> Target:
    found = request.getfixturevalue(f"{request.param}_server")
    with found.client() as c:
        c.flushall()
    return found


@pytest.fixture
def tidelog_target(tidelog_server) -> Target:
    with tidelog_server.client() as c:
        c.flushall()
    return tidelog_server
