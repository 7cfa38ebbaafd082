"""PubMedQA answer evaluation: scoring, aggregation and the abstention sweep (no models)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.errors import DatasetError
from verifai_desktop.evaluate.answer_metrics import (
    AnswersReport,
    QuestionResult,
    abstention_sweep,
    aggregate,
)
from verifai_desktop.evaluate.answer_tables import format_comparison, format_report
from verifai_desktop.evaluate.answers import decide
from verifai_desktop.evaluate.generation_cache import CachingGenerator
from verifai_desktop.evaluate.pubmedqa import load_pubmedqa, passage_pmid, to_document
from verifai_desktop.generate.grammar import decision_grammar
from verifai_desktop.generate.prompt import DECISION_PROMPT, ChatMessage, build_answer_prompt


def _r(
    pmid: str, cos: float | None, labels: tuple[str, ...], decision: str = "yes"
) -> QuestionResult:
    n_pairs = sum(label != "unreferenced" for label in labels)
    return QuestionResult(
        pmid=pmid,
        gold="yes",
        decision=decision,
        best_cosine=cos,
        gold_retrieved=True,
        gold_cited=pmid == "1",
        labels=labels,
        n_pairs=n_pairs,
        n_support=labels.count("supported"),
        n_contradict=labels.count("contradicted"),
        n_invalid=0,
        timings_ms={"generate": 100.0, "verify": 10.0},
        answer="",
    )


RESULTS = (
    _r("1", 0.8, ("supported", "supported")),
    _r("2", 0.3, ("supported", "contradicted", "unreferenced"), decision="no"),
    _r("3", 0.1, ("no_evidence",), decision="maybe"),
)


def test_sweep_refusal_vs_unsupported() -> None:
    rows = abstention_sweep(RESULTS, (0.0, 0.2, 0.5, 0.9))
    assert [r.refusal_pct for r in rows] == pytest.approx([0.0, 100 / 3, 200 / 3, 100.0])
    # t=0: 6 sentences, 3 supported; t=0.2: drops q3 -> 5 sentences, 2 not supported
    assert [r.kept_sentences for r in rows] == [6, 5, 2, 0]
    assert [r.unsupported_pct for r in rows] == pytest.approx([50.0, 40.0, 0.0, 0.0])
    assert [r.contradicted_pct for r in rows] == pytest.approx([100 / 6, 20.0, 0.0, 0.0])


def test_aggregate() -> None:
    rep = aggregate(RESULTS, n_documents=10, k=5, models={})
    assert rep.n_sentences == 6
    assert rep.coverage_pct == pytest.approx(500 / 6)
    assert rep.support_pct == pytest.approx(60.0)  # 3 of 5 verified pairs
    assert rep.contradict_pct == pytest.approx(20.0)
    assert rep.gold_cited_pct == pytest.approx(100 / 3)
    assert rep.decision_accuracy_pct == pytest.approx(100 / 3)
    assert rep.decision_counts == {"yes": 1, "no": 1, "maybe": 1}
    assert rep.mean_ms == {"generate": 100.0, "verify": 10.0}


def test_pubmedqa_documents(tmp_path: Path) -> None:
    f = tmp_path / "pq.json"
    f.write_text(
        json.dumps({"123": {"QUESTION": "Q?", "CONTEXTS": ["A.", "B."], "final_decision": "Yes"}})
    )
    (item,) = load_pubmedqa(f)
    assert (item.pmid, item.final_decision, item.contexts) == ("123", "yes", ("A.", "B."))
    doc = to_document(item)
    assert doc.text == "A.\n\nB." and str(doc.path) == "pubmedqa:123"
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(DatasetError, match=r"bad\.json"):
        load_pubmedqa(bad)


def test_passage_pmid() -> None:
    p = Passage(
        ChunkId(1), DocId(1), Path("pubmedqa:42"), "", "x", 0, 1, Location(LocationKind.SECTION), ()
    )
    assert passage_pmid(p) == "42"
    assert (
        passage_pmid(
            p.__class__(**{**{f: getattr(p, f) for f in p.__slots__}, "path": Path("/a/b.pdf")})
        )
        is None
    )


class _CountingGenerator:
    def __init__(self) -> None:
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages, *, grammar=None, max_tokens=None, temperature=0.0, **_kw):  # type: ignore[no-untyped-def]
        self.calls += 1
        yield "An answer. "
        yield f"[{self.calls}]"


def test_caching_generator_replays_identical_requests(tmp_path: Path) -> None:
    inner = _CountingGenerator()
    msgs = (ChatMessage("user", "q"),)
    cache = CachingGenerator(inner, "sha-a", tmp_path / "c.json")
    assert "".join(cache.stream(msgs, grammar="g")) == "An answer. [1]"
    assert "".join(cache.stream(msgs, grammar="g")) == "An answer. [1]"  # replayed
    assert inner.calls == 1 and cache.hits == 1
    assert cache.last is not None and set(cache.last) == {"generate", "first_token"}
    assert "".join(cache.stream(msgs, grammar="other")) == "An answer. [2]"  # new key
    # persisted, and keyed by the model's sha256
    again = CachingGenerator(inner, "sha-a", tmp_path / "c.json")
    assert "".join(again.stream(msgs, grammar="g")) == "An answer. [1]"
    other_model = CachingGenerator(inner, "sha-b", tmp_path / "c.json")
    assert "".join(other_model.stream(msgs, grammar="g")) == "An answer. [3]"


class _DecidingGenerator(_CountingGenerator):
    def __init__(self, reply: str) -> None:
        super().__init__()
        self.reply = reply
        self.requests: list[tuple[tuple[ChatMessage, ...], str | None, int | None]] = []

    def stream(self, messages, *, grammar=None, max_tokens=None, temperature=0.0, **_kw):  # type: ignore[no-untyped-def]
        self.requests.append((tuple(messages), grammar, max_tokens))
        yield self.reply


def test_decide_continues_the_answer_chat_under_the_decision_grammar() -> None:
    passage = Passage(
        ChunkId(1), DocId(1), Path("pubmedqa:7"), "", "Aspirin helps.", 0, 14,
        Location(LocationKind.SECTION), ((0, 14),),
    )  # fmt: skip
    prompt = build_answer_prompt(
        "Does aspirin help?", (passage,), count_tokens=len, max_prompt_tokens=10_000
    )
    generator = _DecidingGenerator(" Yes \n")
    assert decide(generator, prompt, "Aspirin helps. [1]") == "yes"
    ((messages, grammar, max_tokens),) = generator.requests
    assert messages[: len(prompt.messages)] == prompt.messages  # shared prefix (KV cache)
    assert messages[-2] == ChatMessage("assistant", "Aspirin helps. [1]")
    assert messages[-1] == ChatMessage("user", DECISION_PROMPT)
    assert grammar == decision_grammar() and max_tokens == 4


def test_held_out_mode_removes_exactly_the_own_abstracts_of_every_other_question(
    shared_data: Path, fake_settings: object
) -> None:
    from verifai_desktop.evaluate.pubmedqa import build_collection, held_out_corpus
    from verifai_desktop.store.collection import Collection

    items = load_pubmedqa(shared_data / "pubmedqa" / "ori_pqal.json")[:30]
    asked = items[:10]
    corpus, held = held_out_corpus(items, asked)
    assert held == {it.pmid for it in (asked[0], asked[2], asked[4], asked[6], asked[8])}
    assert [it.pmid for it in corpus] == [it.pmid for it in items if it.pmid not in held]
    n = build_collection("held", corpus, settings=fake_settings)  # type: ignore[arg-type]
    assert n == 25
    with Collection.open("held") as c:
        sources = {str(rec.source) for rec in c.documents()}
    assert sources == {f"pubmedqa:{it.pmid}" for it in items} - {f"pubmedqa:{p}" for p in held}


def test_held_out_sweep_and_citations_before_and_after() -> None:
    import dataclasses

    from verifai_desktop.evaluate.answer_metrics import held_out_sweep

    held_a = dataclasses.replace(_r("1", 0.3, ("no_evidence",)), held_out=True)
    held_b = dataclasses.replace(_r("2", 0.9, ("supported",)), held_out=True)
    kept = dataclasses.replace(
        _r("3", 0.8, ("supported", "no_evidence")),
        generator_labels=("no_evidence", "no_evidence"),
        gold_cited_generator=False,
        n_pairs_generator=2,
    )
    rows = {(h.rule, h.threshold): h for h in held_out_sweep((held_a, held_b, kept), (0.0, 0.5))}
    assert rows[("retrieval", 0.0)].refused_held_out_pct == 0.0
    assert rows[("retrieval", 0.5)].refused_held_out_pct == 50.0  # q1 below 0.5
    assert rows[("retrieval + evidence", 0.0)].refused_held_out_pct == 50.0  # q1: no support
    assert rows[("retrieval + evidence", 0.0)].refused_kept_pct == 0.0
    assert rows[("retrieval + evidence", 0.0)].unsupported_pct == pytest.approx(100 / 3)
    assert rows[("retrieval + evidence", 0.0)].kept_answers == 2
    # The best-guess form keeps an answer whose unsure sentence leans to SUPPORT.
    held_c = dataclasses.replace(
        _r("4", 0.9, ("unsure",)), held_out=True, best_guess_supported=True
    )
    rows = {(h.rule, h.threshold): h for h in held_out_sweep((held_a, held_c, kept), (0.0,))}
    assert rows[("retrieval + evidence", 0.0)].refused_held_out_pct == 100.0
    assert rows[("retrieval + evidence (best guess)", 0.0)].refused_held_out_pct == 50.0
    assert rows[("retrieval + evidence (best guess)", 0.0)].kept_answers == 2
    rep = aggregate((kept,), n_documents=1, k=5, models={})
    before, after = rep.citations
    assert before.supported_sentences_pct == 0.0 and after.supported_sentences_pct == 50.0
    assert before.gold_cited_pct == 0.0


def _report(name: str, results: tuple[QuestionResult, ...]) -> AnswersReport:
    models = {"generator": {"name": name, "path": f"/m/{name}.gguf", "sha256": "ab" * 32}}
    return aggregate(results, n_documents=3, k=5, models=models)


def test_report_gives_answer_length_and_generator() -> None:
    rep = _report("gen-a", RESULTS)
    assert rep.sentences_per_answer == pytest.approx(2.0)  # 6 sentences, 3 answers
    head = format_report(rep).splitlines()[:2]
    assert head == [
        "PubMedQA answers: 3 questions, 3 abstracts, k=5, 6 sentences (2.0 per answer)",
        "generator: gen-a (sha256 abababababab)",
    ]


def test_comparison_puts_generators_side_by_side() -> None:
    import dataclasses

    slow = tuple(
        dataclasses.replace(r, timings_ms={"generate": 3000.0, "verify": 500.0, "total": 4000.0})
        for r in RESULTS[:2]
    )
    table = format_comparison((_report("gen-a", RESULTS), _report("gen-b", slow)))
    rows = table.splitlines()[2:]
    # gen-a: own abstract cited by the generator in none, after re-citation in 1 of 3; no pairs
    # from the generator's citations, 3 of 5 after; 3 of 6 sentences supported, none unsure;
    # 1 of 3 decisions right; no "total" timing, generate 100 ms
    assert rows[0].split() == [
        "gen-a", "3", "2.00", "0.0/33.3", "0.0/60.0", "50.0", "0.0", "33.3", "0.0", "0.1"
    ]  # fmt: skip
    assert rows[1].split() == [
        "gen-b", "2", "2.50", "0.0/50.0", "0.0/75.0", "60.0", "0.0", "50.0", "4.0", "3.0"
    ]  # fmt: skip


def test_eval_answers_runs_each_generator_on_the_same_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from verifai_desktop.cli import ask_cmd, main
    from verifai_desktop.settings import Settings

    calls: list[tuple[str, Path, int, int]] = []

    def fake_eval(path: Path, *, limit: int, k: int, settings: Settings, **_: object) -> object:
        calls.append((settings.models.generator, path, limit, k))
        return _report(settings.models.generator, RESULTS)

    monkeypatch.setattr(ask_cmd, "evaluate_pubmedqa", fake_eval)
    qa = tmp_path / "pq.json"
    argv = ["eval", "answers", "--pubmedqa", str(qa), "--limit", "40", "-k", "5"]
    assert main([*argv, "--generator", "small", "--generator", "/m/large.gguf"]) == 0
    assert calls == [("small", qa, 40, 5), ("/m/large.gguf", qa, 40, 5)]
    out = capsys.readouterr().out
    assert "generator: small (sha256" in out and "generator: /m/large.gguf (sha256" in out
    assert [line.split()[0] for line in out.splitlines()[-2:]] == ["small", "/m/large.gguf"]
    calls.clear()
    assert main([*argv, "--json"]) == 0  # no --generator: the settings' one, one report
    assert calls == [("qwen2.5-coder-0.5b-instruct-q4_k_m", qa, 40, 5)]
    assert json.loads(capsys.readouterr().out)["sentences_per_answer"] == 2.0


def test_eval_answers_skip_asks_a_later_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from verifai_desktop.cli import ask_cmd, main
    from verifai_desktop.settings import Settings

    calls: list[tuple[int, int]] = []

    def fake_eval(path: Path, *, limit: int, skip: int, settings: Settings, **_: object) -> object:
        calls.append((skip, limit))
        return _report(settings.models.generator, RESULTS)

    monkeypatch.setattr(ask_cmd, "evaluate_pubmedqa", fake_eval)
    argv = ["eval", "answers", "--pubmedqa", str(tmp_path / "pq.json"), "--json"]
    assert main([*argv, "--skip", "40", "--limit", "60"]) == 0
    assert main(argv) == 0
    assert calls == [(40, 60), (0, 30)]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--skip", "-1"])
    assert exc.value.code == 2
    assert "-1 is below 0; give 0 or more" in capsys.readouterr().err


def test_unsure_sentences_are_counted_on_their_own_and_never_as_support() -> None:
    """Issue 26: an unsure sentence is reported as such, and is not support (abstention by
    evidence refuses an answer whose sentences are all unsure)."""
    unsure = (
        _r("1", 0.8, ("unsure", "supported")),
        _r("2", 0.7, ("unsure", "contradicted", "unsure")),
    )
    assert not unsure[0].evidence_refused and unsure[1].evidence_refused
    rep = _report("gen-a", unsure)
    assert rep.label_pct["unsure"] == pytest.approx(60.0)  # 3 of 5 sentences
    assert rep.label_pct["supported"] == pytest.approx(20.0)
    [row] = abstention_sweep(unsure, (0.0,))
    assert row.unsupported_pct == pytest.approx(80.0)  # unsure is not supported
    assert "sentences shown (%): green 20.0, red 20.0, unsure 60.0" in format_report(rep)
    header, row_text = format_comparison((rep,)).splitlines()[1:]
    assert "unsure %" in header
    assert row_text.split()[5:7] == ["20.0", "60.0"]  # sentences supported, unsure
