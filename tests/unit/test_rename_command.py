"""rename-command (configuration file only): the command answers to its new
name only, "" removes it, renames chain, and an unknown command stops the start."""

from __future__ import annotations

import pytest

import tidelog.commands  # noqa: F401  (registers the commands)
from tidelog.config import Config, ConfigError
from tidelog.engine import Engine
from tidelog.resp.replies import ErrorReply


def engine_with(text: str) -> Engine:
    config = Config()
    config.load_text(text)
    return Engine(config)


def run(engine: Engine, *argv: bytes):
    return engine.execute(engine.new_client(), list(argv))


def test_a_renamed_command_answers_to_its_new_name_only() -> None:
    e = engine_with('rename-command SET store\nrename-command FLUSHALL ""\n')
    for _ in range(3):  # the dispatch cache must not bring the old names back
        assert run(e, b"store", b"k", b"v") is not None
        assert run(e, b"STORE", b"k", b"w") is not None
        reply = run(e, b"set", b"k", b"v")
        assert isinstance(reply, ErrorReply) and reply.message.startswith(
            b"ERR unknown command 'set'")
        assert isinstance(run(e, b"FLUSHALL"), ErrorReply)
    assert run(e, b"GET", b"k") == b"w"


def test_renames_chain_and_a_gone_name_cannot_be_renamed() -> None:
    e = engine_with("rename-command get fetch\nrename-command fetch read\n")
    run(e, b"SET", b"k", b"v")
    assert run(e, b"read", b"k") == b"v"
    assert isinstance(run(e, b"fetch", b"k"), ErrorReply)
    with pytest.raises(ValueError, match="No such command in rename-command: nosuch"):
        engine_with("rename-command nosuch x\n")
    with pytest.raises(ValueError, match="get"):
        engine_with('rename-command get ""\nrename-command get x\n')


def test_rename_command_takes_two_arguments() -> None:
    with pytest.raises(ConfigError):
        engine_with("rename-command get\n")
