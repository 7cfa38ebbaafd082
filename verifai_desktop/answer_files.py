"""Answer files: the export formats an answer is saved in and the one way to write it.

Markdown and HTML come from :mod:`verifai_desktop.presentation`, with author-year citations
and the references cited (:mod:`verifai_desktop.citations`, APA), JSON from
:mod:`verifai_desktop.codec`; a file is user-only and written whole or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.citations import answer_html, answer_markdown
from verifai_desktop.codec import answer_to_json
from verifai_desktop.domain import Answer
from verifai_desktop.errors import UnsupportedExportFormat
from verifai_desktop.private import export_private_texts, export_target


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """A file format an answer can be saved in.

    Attributes:
        name: ``"markdown"``, ``"html"`` or ``"json"``.
        suffix: the file suffix written (``".md"``).
        file_filter: the save dialog's filter (``"Markdown (*.md)"``).
        render: the answer as the file's text, cited as the ``[citations]`` settings say
            (``None``: the defaults).
        other_suffixes: further suffixes read as this format (``".htm"``).
    """

    name: str
    suffix: str
    file_filter: str
    render: Callable[[Answer, CitationSettings | None], str]
    other_suffixes: tuple[str, ...] = ()


EXPORT_FORMATS: dict[str, ExportFormat] = {
    "markdown": ExportFormat("markdown", ".md", "Markdown (*.md)", answer_markdown, (".markdown",)),
    "html": ExportFormat("html", ".html", "HTML (*.html)", answer_html, (".htm",)),
    "json": ExportFormat("json", ".json", "JSON (*.json)", lambda a, _c: answer_to_json(a)),
}
"""Export formats by name, in the order a save dialog offers them."""


def format_for_path(path: Path | str) -> ExportFormat:
    """The export format a file name asks for, by its suffix (case-insensitive).

    Raises:
        UnsupportedExportFormat: the suffix names none of :data:`EXPORT_FORMATS`.
    """
    suffix = Path(path).suffix.lower()
    for fmt in EXPORT_FORMATS.values():
        if suffix == fmt.suffix or suffix in fmt.other_suffixes:
            return fmt
    raise UnsupportedExportFormat(path, tuple(f.suffix for f in EXPORT_FORMATS.values()))


def write_answer(
    answer: Answer,
    path: Path | str,
    *,
    fmt: ExportFormat | None = None,
    citations: CitationSettings | None = None,
) -> Path:
    """Write ``answer`` to ``path`` as UTF-8 in ``fmt`` (by default the format its suffix names),
    cited as ``citations`` says (the user's ``[citations]`` settings; ``None``: the defaults,
    author-year where sources have entries).

    The file is user-only (mode 0600; it quotes the documents) and written whole or not at
    all (:func:`~verifai_desktop.private.export_private_texts`).

    Returns:
        The path written.

    Raises:
        UnsupportedExportFormat: ``fmt`` is None and the suffix names no export format.
        ExportFailed: the file cannot be written (a folder, no name, a missing or read-only
            folder, a full disk); nothing was changed.
    """
    target = export_target(path, "answer")
    fmt = fmt or format_for_path(target)
    export_private_texts([(target, fmt.render(answer, citations))], what="answer")
    return target
