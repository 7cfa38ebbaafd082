"""Content words: what the verifier's gate and the prompt's sentence ranking compare."""

from __future__ import annotations

from verifai_desktop.words import STOP_WORDS, content_stems


def test_function_words_do_not_count_and_forms_of_a_word_share_a_stem() -> None:
    assert content_stems("What is the association of it with the 3-year survival?") == {
        "assoc",
        "3-yea",
        "survi",
    }
    assert content_stems("Smoking was associated with it") & content_stems("an association")
    assert not content_stems("Which of these was it?")
    assert {"the", "which", "how"} <= STOP_WORDS
    assert "48" in content_stems("viable for 48 hours")
