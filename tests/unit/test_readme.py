"""README.md promises: the two commands first, and the command list matches the table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _command_list_module():
    spec = importlib.util.spec_from_file_location("command_list", ROOT / "scripts" / "command_list.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_opens_with_the_two_commands():
    first_block = ROOT.joinpath("README.md").read_text().split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()[1:] if line.strip()]
    assert commands == ["make run", "make test"]


def test_readme_command_list_matches_the_command_table():
    module = _command_list_module()
    text = ROOT.joinpath("README.md").read_text()
    assert module.readme_with_list(text) == text, (
        "README's command list is stale: run `python scripts/command_list.py --write`")


def test_ci_runs_the_readme_test_command():
    assert "make test" in ROOT.joinpath(".ci", "run").read_text()
