"""The durability tests' checker: what it lets pass after a crash, and what it catches.

``disagreements`` is what decides whether a SIGKILL lost acknowledged data, so its
allowances are tested here on hand-made server views, every interleaving of the
write in flight and the writes of the last second included.
"""

from __future__ import annotations

from tests.support.crash_model import KeyState, Model, disagreements


def model_with(entries: dict[str, list[str]]) -> Model:
    model = Model(list(entries))
    for key, ids in entries.items():
        model.keys[key].entries = list(ids)
    return model


def seen_with(entries: dict[str, list[str]]) -> dict[str, KeyState]:
    return {key: KeyState(entries=list(ids)) for key, ids in entries.items()}


def test_agreement_is_empty():
    model = model_with({"a": ["1-0", "2-0"], "b": ["3-0"]})
    assert disagreements(model, seen_with({"a": ["1-0", "2-0"], "b": ["3-0"]})) == []


def test_a_lost_acknowledged_entry_is_caught():
    model = model_with({"a": ["1-0", "2-0"], "b": []})
    problems = disagreements(model, seen_with({"a": ["1-0"], "b": []}))
    assert len(problems) == 1 and problems[0].startswith("a: entries")


def test_everysec_loss_on_the_key_of_the_write_in_flight_is_allowed():
    """The case seen in a fresh clone: the last second's XADDs and the write in
    flight at the kill both on key ``a``."""
    model = model_with({"a": ["1-0", "2-0", "3-0"], "b": ["4-0"]})
    model.in_flight = "a"
    lost = {("a", "2-0"), ("a", "3-0")}
    assert disagreements(model, seen_with({"a": ["1-0"], "b": ["4-0"]}), lost, strict=False) == []
    # ... and the in-flight XADD may have landed after the survivors
    assert disagreements(model, seen_with({"a": ["1-0", "9-0"], "b": ["4-0"]}), lost,
                         strict=False) == []


def test_the_key_in_flight_still_needs_every_entry_not_allowed_to_be_lost():
    model = model_with({"a": ["1-0", "2-0", "3-0"], "b": []})
    model.in_flight = "a"
    problems = disagreements(model, seen_with({"a": ["1-0", "2-0"], "b": []}),
                             {("a", "2-0")}, strict=False)
    assert len(problems) == 1 and "missing" in problems[0]


def test_the_key_in_flight_may_hold_one_extra_entry_at_its_end_only():
    model = model_with({"a": ["1-0"], "b": []})
    model.in_flight = "a"
    assert disagreements(model, seen_with({"a": ["1-0", "5-0"], "b": []})) == []
    assert disagreements(model, seen_with({"a": ["1-0", "5-0", "6-0"], "b": []}))
    assert disagreements(model, seen_with({"a": ["0-5", "1-0"], "b": []}))


def test_losses_on_other_keys_only_within_the_allowance():
    model = model_with({"a": ["1-0"], "b": ["2-0", "3-0"]})
    model.in_flight = "a"
    seen = seen_with({"a": ["1-0"], "b": ["2-0"]})
    assert disagreements(model, seen, {("b", "3-0")}, strict=False) == []
    assert disagreements(model, seen, {("b", "2-0")}, strict=False)


def test_strict_compares_group_state_except_on_the_key_in_flight():
    model = model_with({"a": ["1-0"], "b": ["2-0"]})
    model.keys["a"].pending = {"1-0": "c1"}
    model.keys["b"].pending = {"2-0": "c2"}
    model.keys["b"].consumers = {"c2"}
    model.in_flight = "a"
    seen = seen_with({"a": ["1-0"], "b": ["2-0"]})
    seen["b"].pending = {"2-0": "c2"}
    seen["b"].consumers = {"c2", "c3"}     # more consumers than the model knows: fine
    assert disagreements(model, seen) == []
    seen["b"].pending = {}
    assert any("pending" in p for p in disagreements(model, seen))
    assert disagreements(model, seen, strict=False) == []
