"""What OCR left unread in a file, in one line: the status reason its outcome shows.

The scanned pages and embedded images not read are grouped by reason; a group names its pages
as ranges (``"scanned pages 9-100"``) and at most :data:`MAX_PAGE_ITEMS` of them, and at most
:data:`MAX_IMAGE_NAMES` images, then says how many more, so a file of 300 scanned pages or
2,000 pictures still makes a line that can be read.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_PAGE_ITEMS = 10
"""Most page numbers or ranges named per reason; the rest are counted."""
MAX_IMAGE_NAMES = 3
"""Most image names named per reason (each can be long: its path in the file and where it
is shown); the rest are counted."""


def unread_summary(
    unread: Sequence[tuple[int, str]], images: Sequence[tuple[str, str]] = ()
) -> str:
    """``"scanned pages 1, 2 not recognised: <reason>; scanned pages 9-100 not recognised:
    <reason>; embedded image word/media/image1.png not recognised: <reason>"``: pages, then
    images, grouped by reason, for a document's status reason (``""`` for none). A long group
    is summarised: ``"150 scanned pages (1, 3, 5, ... 19 and 140 more)"``, ``"2,000 embedded
    images (a.png, b.png, c.png and 1,997 more)"``.

    Args:
        unread: ``(page number, reason)`` of the scanned pages not read.
        images: ``(image, reason)`` of the embedded images not read; ``image`` names it
            (``Document.unread_images``).
    """
    pages: dict[str, list[int]] = {}
    for page, reason in unread:
        pages.setdefault(reason, []).append(page)
    named: dict[str, list[str]] = {}
    for image, reason in images:
        named.setdefault(reason, []).append(image)
    parts = [f"{_pages(numbers)} not recognised: {reason}" for reason, numbers in pages.items()]
    parts += [f"{_images(names)} not recognised: {reason}" for reason, names in named.items()]
    return "; ".join(parts)


def page_ranges(numbers: Sequence[int]) -> list[str]:
    """Page numbers as ranges, in ascending order: ``[1, 2, 5, 6, 7, 9]`` -> ``["1", "2",
    "5-7", "9"]`` (a run of three or more is a range; repeats are dropped)."""
    out: list[str] = []
    ordered = sorted(set(numbers))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j - i >= 2:
            out.append(f"{ordered[i]}-{ordered[j]}")
        else:
            out.extend(str(n) for n in ordered[i : j + 1])
        i = j + 1
    return out


def _pages(numbers: Sequence[int]) -> str:
    items = page_ranges(numbers)
    count = len(set(numbers))
    if len(items) <= MAX_PAGE_ITEMS:
        return f"scanned page{'s' if count > 1 else ''} {', '.join(items)}"
    shown = items[:MAX_PAGE_ITEMS]
    shown_pages = sum(_range_size(item) for item in shown)
    return f"{count:,} scanned pages ({', '.join(shown)} and {count - shown_pages:,} more)"


def _range_size(item: str) -> int:
    first, _, last = item.partition("-")
    return int(last) - int(first) + 1 if last else 1


def _images(names: Sequence[str]) -> str:
    if len(names) <= MAX_IMAGE_NAMES:
        return f"embedded image{'s' if len(names) > 1 else ''} {', '.join(names)}"
    shown = ", ".join(names[:MAX_IMAGE_NAMES])
    return f"{len(names):,} embedded images ({shown} and {len(names) - MAX_IMAGE_NAMES:,} more)"
