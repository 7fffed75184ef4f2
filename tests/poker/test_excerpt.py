"""poker.excerpt: quotes in error lines are cut at a bounded length and say how much was cut."""

from __future__ import annotations

from poker.excerpt import QUOTED_LENGTH, quote


def test_a_short_text_is_quoted_whole() -> None:
    assert quote("STATE:0:cc") == "'STATE:0:cc'"
    assert quote(b"ok") == "b'ok'"
    assert quote([1, 2]) == "[1, 2]"


def test_a_long_text_is_cut_and_says_how_much() -> None:
    line = "x" * 5_000_000
    assert quote(line) == repr("x" * QUOTED_LENGTH) + f"... ({5_000_000 - QUOTED_LENGTH} more characters)"
    assert quote("abcdef", 3) == "'abc'... (3 more characters)"
    assert quote(b"\x1b[2J" * 100, 4) == "b'\\x1b[2J'... (396 more bytes)"


def test_any_other_value_is_cut_in_its_repr() -> None:
    record = [0, [0, 1], b"\x00" * 1000]
    text = quote(record)
    assert text.startswith("[0, [0, 1], b'\\x00") and text.endswith(f"... ({len(repr(record)) - QUOTED_LENGTH} more characters)")
