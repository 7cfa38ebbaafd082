"""The bibliographic record of a document that came from a reference manager (issue 43).

A document ingested through a BibTeX or CSL-JSON file or a Zotero data folder
(:mod:`verifai_desktop.ingest.bibtex`, :mod:`verifai_desktop.ingest.zotero`) keeps its entry's
metadata with it in the catalog: a :class:`Reference`. Retrieval hands it on with every passage
(``Passage.reference``), so that answers, claim checks and exports cite "(Cohan et al., 2020,
p. 3)" instead of a file name (:mod:`verifai_desktop.citations`), and an answer's cited entries
can be written back as BibTeX. The metadata is held as a CSL-JSON item (the Citation Style
Language's input format, https://citeproc-js.readthedocs.io/en/latest/csl-json/markup.html),
which citeproc formats in any CSL style.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Reference:
    """One reference-manager entry behind a document.

    Attributes:
        key: the entry's citation key (BibTeX key, CSL-JSON ``id``, Zotero item key).
        csl_json: the entry as a CSL-JSON item (JSON text of one object, keys sorted; its
            ``id`` is ``key``): ``author`` (``[{"family", "given"} | {"literal"}]``),
            ``issued`` (``{"date-parts": [[year, ...]]}``), ``title``, ``container-title``,
            ``DOI``, ``type``, ...
        bibtex: the entry as BibTeX: the original text, unchanged, for an entry read from a
            ``.bib`` file; written from its fields for a CSL-JSON or Zotero entry.
        library: the file or folder it was read from (absolute path as text).
    """

    key: str
    csl_json: str
    bibtex: str = ""
    library: str = ""

    @classmethod
    def from_item(cls, item: dict[str, Any], *, bibtex: str = "", library: str = "") -> Reference:
        """A reference from a CSL-JSON item (its ``id`` is the key)."""
        return cls(str(item["id"]), json.dumps(item, sort_keys=True), bibtex, library)

    def item(self) -> dict[str, Any]:
        """The CSL-JSON item (a new dict each call)."""
        data: dict[str, Any] = json.loads(self.csl_json)
        return data

    @property
    def authors(self) -> tuple[str, ...]:
        """Family names (or literal names) of the authors, in order; editors when there are
        no authors."""
        item = self.item()
        names = item.get("author") or item.get("editor") or []
        out = []
        for name in names:
            if isinstance(name, dict):
                text = name.get("family") or name.get("literal") or ""
                if text:
                    out.append(str(text))
        return tuple(out)

    @property
    def year(self) -> int | None:
        """Year of issue, ``None`` when the entry has none."""
        parts = (self.item().get("issued") or {}).get("date-parts") or [[]]
        try:
            return int(parts[0][0])
        except (IndexError, TypeError, ValueError):
            return None

    @property
    def title(self) -> str:
        """The entry's title ('' when it has none)."""
        return str(self.item().get("title") or "")

    def to_json(self) -> str:
        """JSON text of the whole reference (the catalog's and the answer codec's form)."""
        return json.dumps(
            {
                "key": self.key,
                "csl": json.loads(self.csl_json),
                "bibtex": self.bibtex,
                "library": self.library,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Reference:
        """The inverse of :meth:`to_json`.

        Raises:
            ValueError: ``text`` is not such JSON (``json.JSONDecodeError`` is one).
        """
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("csl"), dict):
            raise ValueError("not a reference")
        return cls(
            str(data["key"]),
            json.dumps(data["csl"], sort_keys=True),
            str(data.get("bibtex", "")),
            str(data.get("library", "")),
        )
