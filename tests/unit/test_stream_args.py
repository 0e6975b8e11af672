"""XREAD's and XREADGROUP's hand-read canonical form reads what the cursor loop reads.

``stream_args._read_canonical`` reads ``[GROUP g c] [COUNT n] [BLOCK ms]
[NOACK] STREAMS ...`` by hand, for speed; for every argument list it must
give the cursor loop's record, or raise the cursor loop's error, or step
aside.  Hypothesis draws argument lists from the words that matter, and
each is parsed both ways.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.commands.stream import stream_args
from tidelog.errors import CommandError

WORDS = [b"GROUP", b"group", b"g", b"c", b"COUNT", b"count", b"BLOCK", b"block", b"NOACK",
         b"STREAMS", b"streams", b"MAXCOUNT", b"CLAIM", b"s", b"t", b">", b"0", b"5", b"-1",
         b"x", b"010"]


def outcome(argv: list[bytes]) -> object:
    try:
        args = stream_args.parse_read_options(argv, group=argv[0] == b"XREADGROUP")
    except CommandError as exc:
        return exc.message
    return (args.group, args.consumer, args.count, args.maxcount, args.timeout, args.noack,
            args.claim, args.keys, args.ids)


def both_ways(argv: list[bytes]) -> tuple[object, object]:
    fast = outcome(argv)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(stream_args, "_read_canonical", lambda argv, args, group: False)
        loop = outcome(argv)
    return fast, loop


def test_the_forms_clients_send_take_the_hand_read_path():
    for argv in ([b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b">"],
                 [b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"10", b"BLOCK", b"1000",
                  b"STREAMS", b"s", b"t", b">", b">"],
                 [b"XREADGROUP", b"GROUP", b"g", b"c", b"BLOCK", b"0", b"NOACK", b"STREAMS",
                  b"s", b">"]):
        assert stream_args._read_canonical(argv, stream_args.ReadArgs(), group=True)
    argv = [b"XREAD", b"COUNT", b"10", b"BLOCK", b"0", b"STREAMS", b"s", b"$"]
    assert stream_args._read_canonical(argv, stream_args.ReadArgs(), group=False)


def test_canonical_forms_read_alike():
    argv = [b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"10", b"BLOCK", b"5", b"NOACK",
            b"STREAMS", b"s", b">"]
    fast, loop = both_ways(argv)
    assert fast == loop == (b"g", b"c", 10, 0, 5, True, -1, [b"s"], [b">"])


NUMBERS = st.sampled_from([b"0", b"5", b"-1", b"x", b"010", b"-0"])
WELL_FORMED = st.one_of(
    st.tuples(st.sampled_from([b"COUNT", b"count", b"BLOCK", b"Block", b"MAXCOUNT", b"CLAIM"]),
              NUMBERS).map(list),
    st.just([b"NOACK"]),
)
OPTION = st.one_of(WELL_FORMED, WELL_FORMED, st.sampled_from(WORDS).map(lambda word: [word]))
BALANCED = st.integers(1, 2).flatmap(
    lambda n: st.tuples(st.lists(st.sampled_from([b"s", b"t"]), min_size=n, max_size=n),
                        st.lists(st.sampled_from([b">", b"0"]), min_size=n, max_size=n)))
TAIL = st.one_of(
    BALANCED.map(lambda keys_ids: [b"STREAMS", *keys_ids[0], *keys_ids[1]]),
    BALANCED.map(lambda keys_ids: [b"STREAMS", *keys_ids[0], *keys_ids[1]]),
    st.lists(st.sampled_from([b"s", b">"]), max_size=3).map(lambda ks: [b"STREAMS", *ks]),
    st.lists(st.sampled_from(WORDS), max_size=3),
)


def test_every_option_value_of_the_canonical_form_reads_alike():
    for count in (None, b"0", b"5", b"-1", b"x", b"010", b"-0"):
        for block in (None, b"0", b"5", b"-1", b"x", b"010"):
            for noack, head in ((False, [b"XREADGROUP", b"GROUP", b"g", b"c"]),
                                (True, [b"XREADGROUP", b"GROUP", b"g", b"c"]),
                                (False, [b"XREAD"]), (True, [b"XREAD"])):
                argv = list(head)
                argv += [b"COUNT", count] if count is not None else []
                argv += [b"BLOCK", block] if block is not None else []
                argv += [b"NOACK"] if noack else []
                for tail in ([b"STREAMS", b"s", b">"], [b"STREAMS", b"s", b"t", b">", b"0"],
                             [b"STREAMS", b"s"], [b"STREAMS"]):
                    fast, loop = both_ways(argv + tail)
                    assert fast == loop, argv + tail


@settings(max_examples=1500, deadline=None)
@given(st.lists(OPTION, max_size=4), TAIL)
def test_options_then_streams_read_alike(options, tail):
    words = [w for option in options for w in option]
    for head in ([b"XREADGROUP", b"GROUP", b"g", b"c"], [b"XREAD"]):
        fast, loop = both_ways(head + words + tail)
        assert fast == loop


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=0, max_size=11))
def test_any_argument_list_reads_alike(words):
    argv = [b"XREADGROUP", b"GROUP", b"g", b"c", *words]
    fast, loop = both_ways(argv)
    assert fast == loop


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=0, max_size=12))
def test_any_argument_list_without_group_first_reads_alike(words):
    for head in ([b"XREADGROUP"], [b"XREAD"]):
        fast, loop = both_ways(head + words)
        assert fast == loop


@pytest.mark.parametrize("argv, text", [
    ([b"XREAD", b"STREAMS", b"s", b"t", b"0"],
     b"ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be "
     b"specified."),
    ([b"XREAD", b"COUNT", b"1", b"STREAMS", b"s"],
     b"ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be "
     b"specified."),
    ([b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b"t", b">"],
     b"ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be "
     b"specified."),
    ([b"XREADGROUP", b"COUNT", b"1", b"GROUP", b"g", b"c", b"STREAMS", b"s"],
     b"ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be "
     b"specified."),
])
def test_unbalanced_streams_texts(argv, text):
    """Redis 8's texts (t_stream.c's xreadCommand): each command by its own name,
    with the special IDs it takes."""
    fast, loop = both_ways(argv)
    assert fast == loop == text
