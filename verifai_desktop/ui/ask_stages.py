"""What the window says while a question runs: the stage in the status bar, the passages found
over the sources panel, and the previous answer kept on screen until the new one streams.

The stages are those the ask session reports (:meth:`~verifai_desktop.pipeline.AskSession.ask`),
in order: ``rerank`` (the verifier reading the top passages, when reranking is on),
``retrieve`` (with the passages found), ``prompt`` (with the passages given to the
generator), ``read`` (the generator reading the prompt, in tokens), ``generate`` (in reply
pieces), ``verify`` (in answer sentences checked), ``conflicts`` (the collection-wide search
for contradictions). No Qt here: :class:`~verifai_desktop.ui.asking.Asking` shows the texts.
"""

from __future__ import annotations

from verifai_desktop.domain import Progress

SEARCHING_TEXT = "Searching your documents…"
LOADING_GENERATOR_STAGE_TEXT = "Loading the generator (first answer)…"
"""Between the search and prompt reading on the first question: the generator loads (its
tokenizer sizes the prompt)."""
BUILDING_PROMPT_TEXT = "Giving the passages to the generator…"
READING_TEXT = "Reading the passages…"
CONFLICTS_TEXT = "Searching the collection for conflicts…"
RERANK_TEXT = "Reading the best passages for evidence…"
LOADING_GENERATOR_TEXT = "loading the generator (first answer)…"
"""The model status once the models are prepared: the generator loads on its first prompt."""
MODELS_LOADED_TEXT = "loaded"
"""The model status once the generator has read its first prompt's passages."""
SEARCHING_CAPTION = "Searching your documents…"
"""The sources panel's caption from pressing Ask until the search returns."""


def reading_text(done: int, total: int | None) -> str:
    """What the answer pane and status bar say while the generator reads the prompt."""
    of = f" of {total:,}" if total is not None else ""
    return f"{READING_TEXT} {done:,}{of} tokens"


def stage_text(p: Progress, *, first_answer: bool = False) -> str:
    """The status-bar text of ask-session report ``p``: the stage really running.

    Args:
        p: a report of :meth:`~verifai_desktop.pipeline.AskSession.ask`.
        first_answer: no answer was written since the models were prepared (the generator
            loads after the search).

    Returns:
        E.g. ``"Searching your documents…"``, ``"Reading the passages… 512 of 1,830
        tokens"``, ``"Writing the answer… 12 tokens"``, ``"Checking sentence 2 of 4…"``,
        ``"Searching the collection for conflicts…"``, ``"Reading the best passages for
        evidence…"``; an unknown stage by its name.
    """
    if p.stage == "retrieve":
        if not p.done:
            return SEARCHING_TEXT
        found = f"Found {len(p.passages)} passages. " if p.passages else ""
        return found + (LOADING_GENERATOR_STAGE_TEXT if first_answer else BUILDING_PROMPT_TEXT)
    if p.stage == "prompt" or (p.stage == "generate" and not p.done):
        return READING_TEXT
    if p.stage == "read":
        return reading_text(p.done, p.total)
    if p.stage == "generate":
        return f"Writing the answer… {p.done} tokens"
    if p.stage == "verify":
        if p.message:
            return f"{p.message[:1].upper()}{p.message[1:]}…"
        if p.total and p.done < p.total:
            return f"Checking sentence {p.done + 1} of {p.total}…"
        return f"Checked {p.done} of {p.total} sentences." if p.total else "Checking the answer…"
    if p.stage == "conflicts":
        return CONFLICTS_TEXT
    if p.stage == "rerank":
        return RERANK_TEXT
    return p.stage


def sources_caption(p: Progress) -> str:
    """The sources panel's caption over the passages of a ``retrieve`` or ``prompt`` report
    (``p.passages``), while the answer is being written."""
    n = len(p.passages)
    if p.stage == "prompt":
        fewer = (
            f" of the {p.total} found (as many as fit its reading budget)"
            if p.total is not None and p.total > n
            else ""
        )
        return f"{n} passages given to the generator{fewer}. Click one to open it."
    return f"{n} passages found; the generator reads them next. Click one to open it."


def previous_note(question: str) -> str:
    """The line under the previous answer while a new question runs."""
    return f"Previous answer, to “{question}”: the new answer replaces it when it begins."


def previous_kept_note(question: str, outcome: str) -> str:
    """The line under the previous answer when the new question ended before its answer began.

    Args:
        question: the previous answer's question.
        outcome: the new question's :attr:`~verifai_desktop.ui.tasks.Task.outcome`
            (``"cancelled"`` or ``"failed"``).
    """
    how = "was stopped" if outcome == "cancelled" else "failed"
    return f"Previous answer, to “{question}”. The new question {how} before its answer began."


def busy_elsewhere_note(checking: bool, collection: str, mode: str = "") -> str:
    """The line under the question box while a question or claim check runs for another
    screen: which collection (and, in the same collection, which mode) it runs in, and where
    to stop it.

    Args:
        checking: a claim check runs (else a question).
        collection: the display name of its collection.
        mode: the name of its mode ("Ask a question") when it runs in the collection on show
            but in the other mode; ``""`` when it runs in another collection.
    """
    what = "A claim is being checked" if checking else "A question is being answered"
    if mode:
        return f"{what} in “{collection}” ({mode}). Run this one when it ends, or Stop it."
    return (
        f"{what} in “{collection}”. Ask here when it ends, or go back to “{collection}” to stop it."
    )


def busy_writing_note(doing: str) -> str:
    """The line under the question box while an index write runs, ``doing`` naming its
    collection ("Adding files to “papers”")."""
    return f"{doing}: questions wait until it ends."
