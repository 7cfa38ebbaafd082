"""Premise windows: offsets into the passage text, window order, the splitter fallback."""

from __future__ import annotations

from verifai_desktop.verify.premises import GRANULARITIES, sentence_windows

TEXT = "Cats sleep. Dogs bark. Birds sing."
SPANS = ((0, 11), (12, 22), (23, 34))


def test_windows_of_one_to_three_sentences_in_size_order() -> None:
    windows = sentence_windows(TEXT, SPANS)
    assert windows == ((0, 11), (12, 22), (23, 34), (0, 22), (12, 34), (0, 34))
    assert [TEXT[s:e] for s, e in windows[3:5]] == [
        "Cats sleep. Dogs bark.",
        "Dogs bark. Birds sing.",
    ]


def test_max_sentences_limits_the_window_size() -> None:
    assert sentence_windows(TEXT, SPANS, max_sentences=1) == SPANS
    assert sentence_windows(TEXT, SPANS[:2], max_sentences=5) == ((0, 11), (12, 22), (0, 22))


def test_text_is_split_with_the_ingest_splitter_when_no_spans_are_given() -> None:
    windows = sentence_windows(TEXT)
    assert [TEXT[s:e] for s, e in windows[:3]] == ["Cats sleep.", "Dogs bark.", "Birds sing."]
    assert windows[-1] == (0, len(TEXT))


def test_no_sentence_gives_the_whole_text_and_blank_text_nothing() -> None:
    assert sentence_windows("no full stop here", ()) == ((0, 17),)
    assert sentence_windows("   ", ()) == ()
    assert sentence_windows("") == ()


def test_granularities_are_the_settings_literal() -> None:
    assert GRANULARITIES == ("passage", "sentences")
