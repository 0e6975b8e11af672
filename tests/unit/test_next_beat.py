"""clock.next_beat: the periodic timers of one server wake on one beat."""

from hypothesis import given
from hypothesis import strategies as st

from tidelog.clock import next_beat


def test_timers_of_one_period_fired_in_one_turn_share_the_next_beat():
    # the cron and the snapshot check run in the same loop turn: one wake-up next time
    assert next_beat(1234.5678, 0.1) == next_beat(1234.5679, 0.1)


def test_a_timer_that_fired_a_little_early_does_not_run_again_at_once():
    assert abs(next_beat(9.9996, 0.1) - 10.1) < 1e-9
    assert abs(next_beat(10.0003, 0.1) - 10.1) < 1e-9


def test_a_slower_period_lands_on_beats_of_the_faster_one():
    # the cluster's 100 ms timer and a cron at hz 20 (50 ms) meet on every other beat
    beat = next_beat(77.03, 0.1)
    assert abs(beat / 0.05 - round(beat / 0.05)) < 1e-6


@given(st.floats(min_value=0, max_value=1e7), st.sampled_from([0.002, 0.01, 0.05, 0.1, 1.0]))
def test_the_next_beat_is_a_multiple_of_the_period_between_a_tenth_and_one_and_a_tenth_away(now, period):
    beat = next_beat(now, period)
    ticks = beat / period
    assert abs(ticks - round(ticks)) < 1e-6 * max(1.0, ticks)
    assert period * 0.1 - 1e-6 <= beat - now <= period * 1.1 + 1e-6 * max(1.0, now)
