"""Keeping a verified answer or a claim check in its collection's history: one policy for the
app and the CLI.

The answer (or check) is what the user asked for; the history
(:mod:`verifai_desktop.store.history`) is a record of it. So :func:`keep_in_history` never
fails the question: a history that cannot be written is logged and reported as a warning,
which each front end shows after the result (``verifai ask`` and ``verifai check``:
``warning: ...`` on stderr, exit status 0; the app: its status bar). The app calls it on the
worker thread that answered, the CLI once the result is printed (so not even a bug in keeping
it can lose it).
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from verifai_desktop.domain import Answer, CheckResult
from verifai_desktop.errors import VerifaiError
from verifai_desktop.settings import Settings
from verifai_desktop.store.history import keep_answer

if TYPE_CHECKING:
    from verifai_desktop.store.base import CollectionStore

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Kept:
    """What became of keeping an answer.

    Attributes:
        answer_id: its id in the collection's history; None when it was not kept (the
            history is off, ``settings.history.keep``, or could not be written).
        warning: why it could not be kept (``"the answer was not kept in the history of
            collection 'papers': ..."``; ``"the claim check was not kept ..."``), for the
            user; empty when kept or when the history is off.
        error: the failure behind the warning when it is a
            :class:`~verifai_desktop.errors.VerifaiError` (a front end may add its own way to
            fix it, e.g. the repair command for a damaged history), else None.
    """

    answer_id: int | None = None
    warning: str = ""
    error: VerifaiError | None = None


def keep_in_history(
    collection: CollectionStore, entry: Answer | CheckResult, settings: Settings
) -> Kept:
    """Keep ``entry`` in ``collection``'s history when ``settings.history.keep`` is on.

    A failure to write the history (damaged or locked file, full disk) is logged and returned
    as :attr:`Kept.warning`, never raised: the answer or check is not lost for it.

    Args:
        collection: the open collection that answered or checked.
        entry: the answer as shown, or the claim check.
        settings: the settings it was made with (``history.keep``; kept with the entry).

    Returns:
        The entry's history id, or the warning to show.
    """
    if not settings.history.keep:
        return Kept()
    what = "claim check" if isinstance(entry, CheckResult) else "answer"
    try:
        return Kept(answer_id=keep_answer(collection, entry, settings))
    except (VerifaiError, OSError, sqlite3.Error) as exc:
        log.warning("could not keep the %s in the history: %s", what, exc)
        return Kept(
            warning=f"the {what} was not kept in the history of collection "
            f"{collection.name!r}: {exc}",
            error=exc if isinstance(exc, VerifaiError) else None,
        )
