"""make test's two passes (scripts/test_twins.py): what the pure twins' pass
runs for the arguments given, and which exit codes pass."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PURE = ["tests/integration", "tests/differential"]


def _script():
    spec = importlib.util.spec_from_file_location("test_twins", ROOT / "scripts" / "test_twins.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


twins = _script()


def test_without_paths_the_pure_pass_runs_its_suites_with_the_options():
    assert twins.pure_selection([], PURE) == (PURE, [])
    assert twins.pure_selection(["-k", "xadd", "-x"], PURE) == (PURE, ["-k", "xadd", "-x"])


def test_named_paths_narrow_the_pure_pass_to_those_inside_its_suites():
    args = ["tests/unit/test_session.py", "tests/integration/test_server.py::test_ping", "-x"]
    assert twins.pure_selection(args, PURE) == (
        ["tests/integration/test_server.py::test_ping"], ["-x"])


def test_paths_outside_its_suites_leave_the_pure_pass_nothing():
    assert twins.pure_selection(["tests/unit", "-q"], PURE) == ([], ["-q"])


def test_the_verdicts():
    assert twins.verdict(0, narrowed=False) == (True, "passed")
    assert twins.verdict(1, narrowed=True)[0] is False
    assert twins.verdict(5, narrowed=False)[0] is False  # nothing collected at all
    assert twins.verdict(5, narrowed=True)[0] is True    # -k selected nothing there


def test_background_passes_run_one_after_the_other_into_their_logs(tmp_path):
    import sys
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    marker = tmp_path / "first-done"
    background = twins.Background()
    background.add("first", [sys.executable, "-c",
                             f"import pathlib; print('one'); pathlib.Path({str(marker)!r}).touch()"],
                   {}, first, False)
    background.add("second", [sys.executable, "-c",
                              f"import pathlib, sys; print('two'); "
                              f"sys.exit(0 if pathlib.Path({str(marker)!r}).exists() else 9)"],
                   {}, second, False)
    background.add("third", [sys.executable, "-c", "import sys; sys.exit(3)"], {},
                   tmp_path / "third.log", False)
    background.thread.start()
    background.thread.join(60)
    assert background.codes == [0, 0, 3]
    assert first.read_text().strip() == "one" and second.read_text().strip() == "two"
