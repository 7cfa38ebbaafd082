"""`verifai ask` and `verifai eval answers`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from verifai_desktop import modelstore
from verifai_desktop.citations import Citer, cited_bibtex, cited_passages
from verifai_desktop.cli.common import (
    add_collection_arg,
    add_json_arg,
    add_store_arg,
    error_hint,
    non_negative_int,
    open_store,
    positive_int,
    print_json,
)
from verifai_desktop.codec import answer_to_dict
from verifai_desktop.domain import TOKEN_COUNTS, Answer, Progress, SentenceLabel
from verifai_desktop.errors import VerifaiError
from verifai_desktop.evaluate.answer_tables import format_comparison, format_report
from verifai_desktop.evaluate.answers import evaluate_pubmedqa
from verifai_desktop.generate.openai_server import leaves_machine_warning
from verifai_desktop.keep import keep_in_history
from verifai_desktop.names import printable, valid_utf8
from verifai_desktop.pipeline import AskSession
from verifai_desktop.presentation import (
    CONFLICT_GLYPH,
    UNSUPPORTED_TEXT,
    conflict_note,
    flag_lines,
    injection_warning,
    instructed_support,
    instructed_support_note,
    ocr_note,
    recitation_note,
    sentence_probability,
    unsure_guess,
)
from verifai_desktop.settings import Settings, load_settings

LABEL_STYLE: dict[SentenceLabel, str] = {
    SentenceLabel.SUPPORTED: "green",
    SentenceLabel.PARTIALLY_SUPPORTED: "yellow",
    SentenceLabel.CONTRADICTED: "bold red",
    SentenceLabel.NO_EVIDENCE: "dark_orange",
    SentenceLabel.UNREFERENCED: "bright_black",
    SentenceLabel.UNSURE: "steel_blue",  # neutral: never green or red
}
INSTRUCTED_MARK = "\u26a0"
"""⚠ after a sentence shown supported by a passage that reads as instructions to an AI, and
before each warning about such a passage."""
INSTRUCTED_STYLE = "bold magenta"
LABEL_TEXT: dict[SentenceLabel, str] = {
    SentenceLabel.SUPPORTED: "supported",
    SentenceLabel.PARTIALLY_SUPPORTED: "partially supported",
    SentenceLabel.CONTRADICTED: "contradicted",
    SentenceLabel.NO_EVIDENCE: "no evidence",
    SentenceLabel.UNREFERENCED: "unreferenced",
    SentenceLabel.UNSURE: "unsure",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai ask``."""
    p = sub.add_parser("ask", help="ask a question; every answer sentence is cited and verified")
    p.add_argument("question", help="the question")
    add_collection_arg(p)
    add_store_arg(p)
    p.add_argument(
        "-k",
        type=positive_int,
        default=None,
        help="most passages given to the generator; the token budget (settings [generation]) "
        "may give fewer (default: 10)",
    )
    p.add_argument("--no-stream", action="store_true", help="do not show tokens as they come")
    p.add_argument(
        "--bib",
        type=Path,
        metavar="FILE",
        help="write the BibTeX of the entries the answer cites to FILE (sources from a .bib "
        "or Zotero library; the original entries, unchanged, for a .bib)",
    )
    add_json_arg(p)
    p.set_defaults(func=run_ask)


def register_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai eval answers``."""
    p = sub.add_parser("answers", help="answer PubMedQA questions and measure citations")
    p.add_argument("--pubmedqa", type=Path, required=True, help="PubMedQA ori_pqal.json")
    p.add_argument(
        "--limit", type=positive_int, default=30, help="questions to ask (default: %(default)s)"
    )
    p.add_argument(
        "-k", type=positive_int, default=5, help="passages per question (default: %(default)s)"
    )
    p.add_argument(
        "--corpus-limit",
        type=int,
        default=None,
        help="abstracts to index (default: all in the file)",
    )
    p.add_argument(
        "--skip",
        type=non_negative_int,
        default=0,
        help="questions passed over before the ones asked (default: %(default)s; the first 40 "
        "are the reported set, choices are made on later ones)",
    )
    p.add_argument("--collection", default="pubmedqa-eval", help="collection to build/reuse")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="generate again instead of replaying identical earlier generations",
    )
    p.add_argument(
        "--generator",
        action="append",
        default=None,
        metavar="NAME_OR_PATH",
        help="generator to answer with (catalog name or GGUF path; default: the settings'); "
        "repeat it to run each on the same questions and print them side by side",
    )
    p.add_argument(
        "--held-out",
        action="store_true",
        help="leave every other question's own abstract out of the collection: those should "
        "be refused; reports refusal rates for both abstention rules",
    )
    add_json_arg(p)
    p.set_defaults(func=run_eval_answers)


def _stderr_progress(enabled: bool) -> Callable[[Progress], None] | None:
    if not enabled:
        return None
    last: dict[str, int] = {}

    def show(p: Progress) -> None:
        if p.stage == "generate":
            return
        if last.get(p.stage) == p.done:
            return
        last[p.stage] = p.done
        total = f"/{p.total}" if p.total is not None else ""
        print(f"[{p.stage}] {p.done}{total} {p.unit} {p.message}".rstrip(), file=sys.stderr)

    return show


ASK_STAGE_TEXT = {
    "retrieve": "Searching your documents",
    "generate": "Starting the generator",
    "read": "Reading the passages",
    "write": "Writing the answer",
    "verify": "Checking the sentences",
    "conflicts": "Searching the collection for conflicts",
}
"""What the terminal progress bar says in each stage of ``verifai ask``."""


def ask_line(p: Progress) -> str | None:
    """The stderr line for ``p`` when stderr is not a terminal (logs, pipes), or None.

    One line per stage change, per prompt batch and per checked sentence: the search, each
    batch of prompt reading (``Reading the passages: 512/1830 tokens``), the first answer
    piece, each sentence checked (``Checking sentence 2 of 4…``) and the conflict search.
    """
    if p.stage == "retrieve" and p.done == 0:
        return "Searching your documents…"
    if p.stage == "read":
        return f"Reading the passages: {p.done}/{p.total} tokens"
    if p.stage == "generate" and p.done == 1:
        return "Writing the answer…"
    if p.stage == "verify" and p.unit == "sentences":
        if p.total is not None and p.done < p.total:
            return f"Checking sentence {p.done + 1} of {p.total}…"
        return None
    if p.stage == "verify" and p.done == 0:
        return "Checking every sentence against its sources…"
    if p.stage == "conflicts" and p.done == 0:
        return "Searching the collection for conflicts…"
    return None


@contextmanager
def ask_progress(
    *, streaming: bool
) -> Iterator[tuple[Callable[[Progress], None], Callable[[], None]]]:
    """Progress of ``verifai ask`` on stderr.

    On a terminal, a transient rich bar, as in ``verifai ingest``: the search, starting the
    generator, prompt reading in tokens (``Reading the passages ━━━━━  512/1830 tokens``);
    when the answer streams to stderr the bar is gone before its first piece, otherwise it
    goes on with writing and checking. Elsewhere, plain lines (:func:`ask_line`).

    Args:
        streaming: the answer's pieces will be written to stderr as they come.

    Yields:
        ``(report, end)``: pass ``report`` as the session's ``progress``; ``end()`` removes
        the bar (call it before writing to stderr; later calls do nothing).
    """
    if not sys.stderr.isatty():

        def line(p: Progress) -> None:
            text = ask_line(p)
            if text:
                print(text, file=sys.stderr, flush=True)

        yield line, lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    bar = RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(ASK_STAGE_TEXT["retrieve"], total=None, unit="")
    live = [True]
    bar.start()

    def end() -> None:
        if live[0]:
            live[0] = False
            bar.stop()

    def show(stage: str, done: int = 0, total: int | None = None, unit: str = "") -> None:
        # Reports come seconds apart (a prompt batch): draw each at once.
        bar.update(
            task,
            description=ASK_STAGE_TEXT[stage],
            completed=done,
            total=total,
            unit=unit,
            refresh=True,
        )

    def report(p: Progress) -> None:
        if not live[0]:
            return
        if p.stage == "read":
            show("read", p.done, p.total, p.unit)
            if streaming and p.total is not None and p.done >= p.total:
                end()  # the answer streams next
        elif p.stage == "generate" and p.done > 0:
            if streaming:
                end()
            else:
                show("write", p.done, None, p.unit)
        elif p.stage == "verify" and p.unit == "sentences":
            show("verify", p.done, p.total, p.unit)
        elif p.stage in ASK_STAGE_TEXT:
            show(p.stage)

    try:
        yield report, end
    finally:
        end()


def run_ask(args: argparse.Namespace) -> int:
    """Answer a question from a collection; a coloured report or ``--json``.

    Progress (search, prompt reading) goes to stderr as in ``verifai ingest``; on a terminal
    the answer then streams there too, unless ``--json`` or ``--no-stream``. The answer is
    printed first, then kept in the collection's history
    (:func:`~verifai_desktop.keep.keep_in_history`); when it cannot be kept, ``warning: ...``
    follows the answer on stderr and the exit status stays 0 (the question was answered).

    A question given in another encoding than UTF-8 (undecodable bytes) is asked with those
    bytes escaped (``\\xe9``).
    """
    settings = load_settings()
    question = valid_utf8(args.question)
    stream = not args.json and not args.no_stream and sys.stderr.isatty()
    warning = leaves_machine_warning(settings.server.base_url)
    if warning:
        print(f"note: {warning}", file=sys.stderr)

    with ask_progress(streaming=stream) as (report, end_progress):

        def on_token(piece: str) -> None:
            end_progress()
            sys.stderr.write(piece)
            sys.stderr.flush()

        with open_store(args, settings=settings) as collection:
            session = AskSession(settings)
            answer = session.ask(
                collection,
                question,
                k=args.k,
                on_token=on_token if stream else None,
                progress=report,
            )
            settings = session.settings_in_effect()  # the preset's thresholds, as recorded
            end_progress()
            if stream:
                sys.stderr.write("\n\n")
            if args.json:
                print_json(answer_to_dict(answer, settings))
            else:
                render_answer(answer, settings)
            if args.bib is not None:
                write_bib(answer, args.bib)
            sys.stdout.flush()  # the answer is out before the history is written
            kept = keep_in_history(collection, answer, settings)  # verifai history, audit
    if kept.warning:
        hint = error_hint(kept.error) if kept.error is not None else ""
        print(f"warning: {kept.warning}{hint}", file=sys.stderr)
    return 0


def write_bib(answer: Answer, path: Path) -> None:
    """Write the BibTeX of the entries ``answer`` cites to ``path`` (a line on stderr says how
    many; an empty file when no cited source has an entry)."""
    text = cited_bibtex(cited_passages(answer))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise VerifaiError(f"cannot write {path}: {exc.strerror or exc}") from exc
    count = text.count("\n@") + text.startswith("@")
    print(f"{count} cited entries written to {printable(str(path))}", file=sys.stderr)


def render_answer(answer: Answer, settings: Settings) -> None:
    """Print an answer with coloured sentences, a legend, verdicts (an unsure sentence with
    its best guess; under each verdict the checks that held it back) and numbered sources;
    author-year citations and the references cited when sources have reference-manager
    entries (setting ``citations``)."""
    from rich.console import Console
    from rich.text import Text

    citer = Citer(answer.passages, settings.citations)
    console = Console(highlight=False)
    console.print(Text(f"Q: {printable(answer.question)}", style="bold"))
    if answer.not_found:
        console.print(Text(answer.text, style="bold yellow"))
        if answer.passages:
            console.print("Closest passages:")
    else:
        if answer.abstained:
            console.print(Text(f"{UNSUPPORTED_TEXT}.", style="bold yellow"))
            console.print(
                Text(
                    "No sentence of the generated answer is supported by the passages. "
                    "The generated answer and its evidence:",
                    style="yellow",
                )
            )
        body = Text()
        for i, s in enumerate(answer.sentences):
            if i:
                body.append(" ")
            body.append(citer.text(s.text), style=LABEL_STYLE[s.label])
            if instructed_support(answer, s):  # never green on injected text unsaid
                body.append(f" {INSTRUCTED_MARK}", style=INSTRUCTED_STYLE)
        console.print(body)
        legend = Text("Legend: ")
        for label in SentenceLabel:
            legend.append(f" {LABEL_TEXT[label]} ", style=f"reverse {LABEL_STYLE[label]}")
            legend.append(" ")
        console.print(legend)
        console.print()
        for i, s in enumerate(answer.sentences, start=1):
            prob = sentence_probability(s)
            head = Text(f"{i}. ")
            head.append(LABEL_TEXT[s.label], style=LABEL_STYLE[s.label])
            if unsure_guess(s):
                head.append(f" ({unsure_guess(s)})")
            elif prob is not None:
                head.append(f" (p={prob:.2f})")
            head.append(f"  {citer.text(s.text)}")
            console.print(head)
            if instructed_support(answer, s):
                note = f"    {INSTRUCTED_MARK} {printable(instructed_support_note(answer, s))}"
                console.print(Text(note, style=INSTRUCTED_STYLE), markup=False)
            for v in s.verdicts:
                line = Text(
                    f"    [{v.passage_number}] {v.label.value} "
                    f"S={v.p_support:.2f} C={v.p_contradict:.2f} N={v.p_no_evidence:.2f}: ",
                    style="dim",
                )
                line.append(f"“{v.evidence}”", style="italic")
                console.print(line)
                for flag in flag_lines(v):
                    console.print(Text(f"      {printable(flag)}"), markup=False)
            if s.recited:
                console.print(Text(f"    {recitation_note(s)}", style="cyan"), markup=False)
            for c in s.conflicts:
                console.print(
                    Text(f"    {CONFLICT_GLYPH} {printable(conflict_note(c))}", style="bold red"),
                    markup=False,
                )
                for flag in flag_lines(c.verdict):
                    console.print(Text(f"      {printable(flag)}"), markup=False)
            if s.invalid_citations:
                bad = ", ".join(str(n) for n in s.invalid_citations)
                console.print(Text(f"    invalid citations dropped: {bad}", style="red"))
    console.print()
    console.print(Text("Sources", style="bold"))
    for n, p in enumerate(answer.passages, start=1):
        ocr = f"  [{ocr_note(p)}]" if p.ocr is not None else ""
        named = citer.label(p)
        if named != p.source_label():
            named += f"  {p.source_label()}"
        console.print(f"[{n}] {printable(named)}  (score {p.fused_score:.3f}){ocr}", markup=False)
        if p.instruction_cues:
            warning = f"    {INSTRUCTED_MARK} {printable(injection_warning(p))}"
            console.print(Text(warning, style=INSTRUCTED_STYLE), markup=False)
    timings = ", ".join(
        f"{k} {v:.0f} ms" for k, v in answer.timings_ms.items() if k not in TOKEN_COUNTS
    )
    counts = [
        f"{k.replace('_', ' ')} {v:,.0f}" for k, v in answer.timings_ms.items() if k in TOKEN_COUNTS
    ]
    if counts:
        timings += "; " + ", ".join(counts)
    console.print(Text(timings, style="dim"))
    references = citer.bibliography(cited_passages(answer)) if not answer.abstained else []
    if references:
        console.print()
        console.print(Text("References", style="bold"))
        for entry in references:
            console.print(Text(printable(entry)), markup=False)


def run_eval_answers(args: argparse.Namespace) -> int:
    """PubMedQA answer evaluation: citation coverage, support, decision agreement, timings."""
    settings = load_settings()
    default = settings.models.generator or modelstore.best_installed_generator()
    generators: list[str] = args.generator or [default]
    reports = []
    for i, generator in enumerate(generators):
        run_settings = dataclasses.replace(
            settings, models=dataclasses.replace(settings.models, generator=generator)
        )
        report = evaluate_pubmedqa(
            args.pubmedqa,
            limit=args.limit,
            k=args.k,
            corpus_limit=args.corpus_limit,
            skip=args.skip,
            collection_name=args.collection,
            settings=run_settings,
            progress=_stderr_progress(not args.json),
            use_cache=not args.no_cache,
            held_out=args.held_out,
        )
        reports.append(report)
        if not args.json:
            print(("\n" if i else "") + format_report(report), flush=True)
    if args.json:
        if len(reports) == 1:
            print_json(dataclasses.asdict(reports[0]))
        else:
            print_json({"runs": [dataclasses.asdict(r) for r in reports]})
    elif len(reports) > 1:
        print("\n" + format_comparison(reports))
    return 0
