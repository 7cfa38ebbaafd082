"""The installed Qt binding keeps Python's reference counts: PySide6 6.12.0 under Python 3.11
drops a reference to ``True`` on every ``Signal.emit()``, and the app aborted after a few
thousand streamed tokens ("Fatal Python error: bool_dealloc")."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    text = Signal(str)
    flag = Signal(bool)


def test_emitting_a_signal_keeps_the_reference_count_of_true(qapp: object) -> None:
    emitter = _Emitter()
    received: list[str] = []
    emitter.text.connect(received.append)
    before = sys.getrefcount(True)
    for _ in range(500):
        emitter.text.emit("token")
        emitter.flag.emit(True)
    assert len(received) == 500
    # A few references may come and go with caches; the bug lost exactly one per emit.
    assert abs(sys.getrefcount(True) - before) < 50
