"""GBNF grammars that constrain the generator at decode time (llama.cpp grammars).

The citation grammar makes every sentence end with one to three citations ``[n]`` after its
full stop (``Claim one. [2] Claim two. [1][3]``): the model writes its claim as it would
naturally, and is then made to say where it comes from. ``n`` may only be 1..k for the k
passages given, so a citation can never name a passage that was not in the prompt. Sentence
text may not hold ``[``, ``]``, ``?``, ``!``, newlines, or a full stop other than a decimal
point between digits (``3.5``), so the sentence splitter's boundaries coincide with the
grammar's.

GBNF reference: llama.cpp ``grammars/README.md``.
"""

from __future__ import annotations

DECISION_WORDS: tuple[str, ...] = ("yes", "no", "maybe")


def citation_grammar(n_passages: int, *, max_sentences: int | None = None) -> str:
    """GBNF for an answer whose every sentence cites passages 1..n_passages.

    Shape: ``Sentence text. [2][5] Another sentence. [1]``

    Args:
        n_passages: how many passages were given (k >= 1).
        max_sentences: upper bound on sentences; unbounded if None.

    Returns:
        The grammar text (root rule ``root``).

    Raises:
        ValueError: ``n_passages < 1`` or ``max_sentences < 1``.
    """
    if n_passages < 1:
        raise ValueError(f"a citation grammar needs at least one passage, got {n_passages}")
    numbers = " | ".join(f'"{n}"' for n in range(n_passages, 0, -1))  # longest first
    if max_sentences is None:
        repeat = '(" " sentence)*'
    else:
        if max_sentences < 1:
            raise ValueError(f"max_sentences must be >= 1, got {max_sentences}")
        repeat = f'(" " sentence){{0,{max_sentences - 1}}}'
    return "\n".join(
        (
            f"root ::= sentence {repeat}",
            'sentence ::= first rest* "." " " cite cite? cite?',
            "first ::= [^ .?!\\[\\]\\n\\r]",
            'rest ::= [^.?!\\[\\]\\n\\r] | [0-9] "." [0-9]',
            'cite ::= "[" num "]"',
            f"num ::= {numbers}",
        )
    )


def decision_grammar() -> str:
    """GBNF allowing exactly one of ``yes``, ``no``, ``maybe`` (PubMedQA decisions)."""
    words = " | ".join(f'"{w}"' for w in DECISION_WORDS)
    return f"root ::= {words}"
