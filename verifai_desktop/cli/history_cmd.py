"""`verifai history`, `verifai feedback` and `verifai audit`: what was answered, what readers
said of the verdicts, and audit records of verified answers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from verifai_desktop.audit import (
    CheckReport,
    build_record,
    check_record,
    ensure_key,
    install_public_key,
    key_path,
    parse_public_key,
    read_record,
)
from verifai_desktop.audit_view import write_record
from verifai_desktop.check_view import check_summary
from verifai_desktop.cli import common
from verifai_desktop.cli.common import add_collection_arg, add_json_arg, error_hint, print_json
from verifai_desktop.domain import NliLabel
from verifai_desktop.errors import (
    AuditKeyError,
    BadRecord,
    CollectionNotFound,
    HistoryCorrupt,
    HistoryNotFound,
    InvalidCollectionName,
    StoreUnavailable,
)
from verifai_desktop.names import name_from_json, name_json, names_json, printable
from verifai_desktop.store.base import CollectionStore
from verifai_desktop.store.folders import collection_history
from verifai_desktop.store.history import (
    Feedback,
    SavedAnswer,
    changed_documents,
    feedback_records,
    write_feedback,
)
from verifai_desktop.store.history_base import AnswerHistory


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai history``, ``verifai feedback`` and ``verifai audit``."""
    p = sub.add_parser(
        "history", help="list, show or delete the answers and claim checks kept for a collection"
    )
    add_collection_arg(p)
    common.add_store_arg(p)
    p.add_argument("--show", type=int, metavar="ID", help="print one answer's JSON as verified")
    p.add_argument("--delete", type=int, metavar="ID", help="forget one answer")
    p.add_argument("--clear", action="store_true", help="forget every answer")
    add_json_arg(p)
    p.set_defaults(func=run_history)

    fb = sub.add_parser("feedback", help="judge verdicts, and export the judgements for training")
    fb_sub = fb.add_subparsers(dest="feedback_command", required=True, metavar="ACTION")
    add = fb_sub.add_parser("add", help="mark a verdict right or wrong, or flag a sentence")
    add_collection_arg(add)
    common.add_store_arg(add)
    add.add_argument("--id", type=int, required=True, help="the answer (verifai history)")
    add.add_argument("--sentence", type=int, required=True, help="sentence number, from 1")
    add.add_argument(
        "--passage", type=int, default=0, help="citation number of the verdict (0: the sentence)"
    )
    what = add.add_mutually_exclusive_group(required=True)
    what.add_argument("--right", action="store_true", help="the verdict is right")
    what.add_argument(
        "--wrong",
        choices=[label.value for label in NliLabel] + ["unsure"],
        metavar="LABEL",
        help="the verdict is wrong; give the right one (SUPPORT, CONTRADICT, NO_EVIDENCE) or "
        "'unsure'",
    )
    what.add_argument("--flag", action="store_true", help="flag the sentence")
    add.add_argument("--note", default="", help="a comment kept with the judgement")
    add.set_defaults(func=run_feedback_add)
    export = fb_sub.add_parser(
        "export", help="write the judgements as premise/hypothesis/label JSONL for training"
    )
    add_collection_arg(export)
    common.add_store_arg(export)
    export.add_argument("--jsonl", required=True, help="file to write (its folder must exist)")
    export.set_defaults(func=run_feedback_export)

    au = sub.add_parser("audit", help="export and check audit records of verified answers")
    au_sub = au.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    ex = au_sub.add_parser("export", help="write an answer's audit record (JSON and HTML)")
    add_collection_arg(ex)
    common.add_store_arg(ex)
    which = ex.add_mutually_exclusive_group(required=True)
    which.add_argument("--last", action="store_true", help="the newest answer")
    which.add_argument("--id", type=int, help="the answer with this id (verifai history)")
    ex.add_argument(
        "--output",
        "-o",
        required=True,
        help="the JSON file (the HTML goes beside it; the folder must exist)",
    )
    ex.set_defaults(func=run_audit_export)
    ck = au_sub.add_parser(
        "check",
        help="check a record whole: its signature, the collection's history of the answer, "
        "and that every quoted span still reads the same (exit 0 ok, 1 problems found, "
        "2 not a readable record)",
    )
    ck.add_argument("record", type=Path, help="an audit record (JSON)")
    common.add_store_arg(ck)
    ck.add_argument(
        "--no-collection",
        action="store_true",
        help="compare with the files only, not with the collection's catalog and history",
    )
    ck.add_argument(
        "--key",
        metavar="PUBLIC_KEY",
        help="require the record to be signed with this public key (`verifai audit key` on "
        "the machine that exported it prints it)",
    )
    add_json_arg(ck)
    ck.set_defaults(func=run_audit_check)
    key = au_sub.add_parser(
        "key", help="print this install's public key, which audit records it exports carry"
    )
    key.set_defaults(func=run_audit_key)


@contextmanager
def _history(args: argparse.Namespace) -> Iterator[AnswerHistory]:
    """The history of ``args.collection``: the embedded one, or with ``--store`` the connecting
    role's history in the PostgreSQL collection."""
    if getattr(args, "store", None) is None:
        with collection_history(args.collection) as history:
            yield history
        return
    with common.open_store(args, reconcile=False) as store, store.history() as history:
        yield history


def _saved(history: AnswerHistory, collection: str, answer_id: int | None) -> SavedAnswer:
    if answer_id is not None:
        return history.require(answer_id)
    saved = history.last()
    if saved is None:
        raise HistoryNotFound(collection, None)
    return saved


def run_history(args: argparse.Namespace) -> int:
    """List the kept answers and claim checks (newest first; a check marked
    :data:`CHECK_MARK`), or show, delete or clear them.

    An answer that cannot be read is left out of the list and counted in a warning on
    stderr (``warning: 1 entry could not be read; ...``, then the answer's id and why); the
    exit status stays 0.
    With ``--json``, each quoted file that changed is named as in
    :func:`~verifai_desktop.names.names_json` (``changed_documents`` and, only for names that
    are not valid UTF-8, ``changed_documents_bytes_b64``).
    """
    with _history(args) as history:
        if args.show is not None:
            sys.stdout.write(_saved(history, args.collection, args.show).answer_json)
            return 0
        if args.delete is not None:
            if not history.delete(args.delete):
                raise HistoryNotFound(args.collection, args.delete)
            print(f"forgot answer {args.delete}")
            return 0
        if args.clear:
            print(f"forgot {history.clear()} answers")
            return 0
        scan = history.scan()
        counts = {a.answer_id: len(history.feedback(a.answer_id)) for a in scan.answers}
    if args.json:
        print_json([_json_entry(a, counts[a.answer_id]) for a in scan.answers])
    elif not scan.answers and not scan.unreadable:
        print(f"no answers kept for {args.collection!r} yet")
    else:
        for a in scan.answers:
            changed = changed_documents(a)
            note = f"  [{len(changed)} document(s) changed since]" if changed else ""
            mark = f"{CHECK_MARK} " if a.kind == "check" else ""
            print(f"{a.answer_id:>4}  {a.when()}  {mark}{printable(a.question)}")
            print(f"      {_summary(a)}{note}")
    if scan.unreadable:
        n = len(scan.unreadable)
        print(
            f"warning: {n} {'entry' if n == 1 else 'entries'} could not be read; if the file is "
            f"damaged, `verifai repair --history --collection {args.collection}` keeps what "
            "can still be read",
            file=sys.stderr,
        )
        for answer_id, reason in scan.unreadable:
            print(f"  answer {answer_id}: {printable(reason)}", file=sys.stderr)
    return 0


CHECK_MARK = "[claim check]"
"""Before the claim of a claim check in ``verifai history``'s list."""


def _summary(saved: SavedAnswer) -> str:
    """An answer's labels (``"2 supported, 1 no evidence"``, or ``"abstained"``); a claim
    check's document verdicts (:func:`~verifai_desktop.check_view.check_summary`)."""
    if saved.kind == "check":
        try:
            return check_summary(saved.check())
        except BadRecord as exc:
            return f"cannot be read: {printable(exc.reason)}"
    labels = saved.data().get("label_counts", {})
    return ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in labels.items() if n) or "abstained"


def _json_entry(saved: SavedAnswer, feedback: int) -> dict[str, object]:
    """One entry of ``verifai history --json``: ``kind`` (``answer`` or ``check``), its
    ``labels`` (an answer's sentences, or a check's documents, per label) and the whole
    saved JSON under ``answer``."""
    data = saved.data()
    if saved.kind == "check":
        labels: dict[str, int] = {}
        for doc in data.get("documents", []):
            labels[str(doc.get("label"))] = labels.get(str(doc.get("label")), 0) + 1
    else:
        labels = data.get("label_counts", {})
    return {
        "id": saved.answer_id,
        "kind": saved.kind,
        "created": saved.created,
        "question": saved.question,
        "labels": labels,
        "abstained": data.get("abstained", False),
        **names_json("changed_documents", [c.path for c in changed_documents(saved)]),
        "feedback": feedback,
        "answer": data,
    }


def run_feedback_add(args: argparse.Namespace) -> int:
    """Record a judgement of one verdict of a kept answer."""
    with _history(args) as history:
        saved = _saved(history, args.collection, args.id)
        answer = saved.answer()
        index = args.sentence - 1
        if not 0 <= index < len(answer.sentences):
            print(
                f"error: answer {args.id} has {len(answer.sentences)} sentences; "
                f"--sentence {args.sentence} is not one of them",
                file=sys.stderr,
            )
            return 1
        sentence = answer.sentences[index]
        verdict = next((v for v in sentence.verdicts if v.passage_number == args.passage), None)
        if args.passage and verdict is None:
            cited = ", ".join(str(v.passage_number) for v in sentence.verdicts) or "none"
            print(
                f"error: sentence {args.sentence} has no verdict on passage [{args.passage}] "
                f"(cited: {cited})",
                file=sys.stderr,
            )
            return 1
        shown = verdict.label.value if verdict is not None else sentence.label.value
        if args.right:
            fb = Feedback(args.id, index, args.passage, shown, "right", note=args.note)
        elif args.wrong is not None:
            label = None if args.wrong == "unsure" else NliLabel(args.wrong)
            fb = Feedback(args.id, index, args.passage, shown, "wrong", label, args.note)
        else:
            fb = Feedback(args.id, index, args.passage, shown, "flagged", note=args.note)
        history.set_feedback(fb)
    print(f"kept: answer {args.id}, sentence {args.sentence}, passage {args.passage}: {fb.verdict}")
    return 0


def run_feedback_export(args: argparse.Namespace) -> int:
    """Write the collection's judgements as training pairs (``models/train_verifier.py
    --extra``)."""
    with _history(args) as history:
        records, skipped = feedback_records(history, collection=args.collection)
    written = write_feedback(records, args.jsonl)
    print(
        f"wrote {len(records)} training pairs to {printable(str(written))}"
        + (f"; {skipped} judgements teach no label (flags, 'wrong' without one)" if skipped else "")
    )
    return 0


def run_audit_export(args: argparse.Namespace) -> int:
    """Write the audit record of a kept answer or claim check as JSON plus an HTML view."""
    with _history(args) as history:
        saved = _saved(history, args.collection, None if args.last else args.id)
    replaced = ensure_key()
    if replaced:
        print(f"warning: {printable(replaced)}", file=sys.stderr)
    record = build_record(saved, collection=args.collection)
    json_path, html_path = write_record(record, args.output)
    print(
        f"audit record of answer {saved.answer_id} ({len(record['quotes'])} quoted spans): "
        f"{printable(str(json_path))}, {printable(str(html_path))}"
    )
    return 0


BAD_RECORD_EXIT = 2
"""Exit status of ``verifai audit check`` for a file that is not a readable audit record (1 is
for a record that was edited or no longer matches its documents)."""


def run_audit_key(args: argparse.Namespace) -> int:
    """Print this install's public key (made on first use)."""
    replaced = ensure_key()
    if replaced:
        print(f"warning: {printable(replaced)}", file=sys.stderr)
    public_key = install_public_key()
    print(public_key)
    print(f"(private key: {printable(str(key_path()))})", file=sys.stderr)
    return 0


def run_audit_check(args: argparse.Namespace) -> int:
    """Check an audit record whole; exit 1 when something was edited or changed, 2 when the
    file is not a readable record."""
    try:
        record = read_record(args.record)
        required = None
        if args.key is not None:
            required = args.key.strip()
            parse_public_key(required)
    except (BadRecord, AuditKeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BAD_RECORD_EXIT
    catalog = None
    saved = None
    stored = None
    note = "not compared (--no-collection)"
    name = record["collection"]
    if not args.no_collection:
        target = argparse.Namespace(collection=name, store=args.store)
        try:
            with common.open_store(target, reconcile=False) as collection:
                catalog = {d.source: d.sha256 for d in collection.documents()}
                stored = _stored_text(collection, record)
            with _history(target) as history:
                saved = history.get(record["answer_id"])
            note = f"answer {record['answer_id']} is no longer in the history of {name!r}"
        except (CollectionNotFound, InvalidCollectionName):
            where = "in that PostgreSQL store" if args.store else "on this machine"
            note = f"collection {name!r} is not {where}; compared with the files only"
        except (HistoryCorrupt, BadRecord, StoreUnavailable) as exc:
            note = f"not compared: {exc}{error_hint(exc)}"
    report = check_record(
        record,
        catalog_sha256=catalog,
        saved=saved,
        history_note=note,
        require_key=required,
        stored_text=stored,
    )
    if args.json:
        print_json(
            {
                "ok": report.ok,
                "signed_by": report.signer,
                "public_key": report.public_key,
                "history": report.history,
                "quotes_checked": report.quotes_checked,
                "documents_checked": report.documents_checked,
                "notes": list(report.notes),
                "problems": [
                    {
                        "kind": p.kind,
                        **name_json("path", p.path),
                        "quote": p.quote_id,
                        "detail": p.detail,
                    }
                    for p in report.problems
                ],
            }
        )
    else:
        _print_report(report)
    return 0 if report.ok else 1


def _stored_text(
    collection: CollectionStore, record: Mapping[str, Any]
) -> dict[str, list[tuple[int, int, str]]]:
    """Path -> ``(char_start, char_end, text)`` of the chunks ``collection`` stored for each
    document the record quotes, when it holds the version quoted (same sha256)."""
    found: dict[str, list[tuple[int, int, str]]] = {}
    for q in record["quotes"]:
        path = name_from_json(q, "path")
        if path in found:
            continue
        held = collection.document(path)
        if held is None or not q["sha256"] or held.sha256 != q["sha256"]:
            continue
        chunks = collection.chunks(collection.document_chunk_ids(held.doc_id))
        found[path] = [
            (r.chunk.char_start, r.chunk.char_end, r.chunk.text) for r in chunks.values()
        ]
    return found


def _signed_by(report: CheckReport) -> str:
    """Whose key signed the record, for people."""
    if report.signer == "nobody":
        return "nobody"
    if report.signer == "this install (earlier key)":
        return f"this install's earlier key {report.public_key}"
    if report.signer == "another install" and any(p.kind == "unknown_key" for p in report.problems):
        return f"an unknown key {report.public_key}"
    return f"{report.signer}'s key {report.public_key}"


def _print_report(report: CheckReport) -> None:
    if report.ok:
        print(
            f"ok: signed by {_signed_by(report)}; history: "
            f"{printable(report.history)}; {report.quotes_checked} quoted spans in "
            f"{report.documents_checked} documents read the same, in documents with the same "
            "sha256"
        )
        for n in report.notes:
            print(f"  note: {printable(n)}")
        return
    if {p.kind for p in report.problems} == {"unknown_key"}:
        print(f"not verified: unknown key {report.public_key}")
    else:
        print(f"changed: {len(report.problems)} finding(s)")
    print(f"  signed by: {_signed_by(report)}; history: {printable(report.history)}")
    for p in report.problems:
        where = f" ({p.quote_id})" if p.quote_id else ""
        path = f" {printable(p.path)}{where}:" if p.path else ""
        print(f"  {p.kind}:{path} {printable(p.detail)}")
    for n in report.notes:
        print(f"  note: {printable(n)}")
