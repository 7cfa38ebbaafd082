"""Tiny, randomly initialised models for tests that need a real Hugging Face checkpoint."""

from __future__ import annotations

from pathlib import Path

WORDS: tuple[str, ...] = (
    "the", "a", "drug", "dose", "reduces", "increases", "risk", "of", "stroke", "in",
    "patients", "trial", "showed", "no", "effect", "mice", "cells", "cancer", "not",
)  # fmt: skip
"""The WordPiece vocabulary of :func:`tiny_deberta_nli` besides special tokens and punctuation."""


def tiny_deberta_nli(root: Path) -> Path:
    """A randomly initialised 2-layer DeBERTa-v2 NLI classifier saved as a model folder.

    Relative attention as in DeBERTa-v3 (the export must handle it); labels in VerifAI's
    DeBERTa order (NO_EVIDENCE, SUPPORT, CONTRADICT), not ours, so the runtime has to read
    them from ``config.json``. Needs torch and transformers (the ``torch`` extra).

    Args:
        root: an empty folder; the vocabulary and the ``hf/`` model folder are written there.

    Returns:
        The model folder (``root / "hf"``): config, weights and tokenizer.
    """
    import torch
    import transformers

    vocab = root / "vocab.txt"
    vocab.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", *WORDS]) + "\n",
        encoding="utf-8",
    )
    tok = transformers.BertTokenizerFast(vocab_file=str(vocab))
    torch.manual_seed(0)
    config = transformers.DebertaV2Config(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=0,
        relative_attention=True,
        position_buckets=16,
        max_relative_positions=32,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        pad_token_id=0,
        num_labels=3,
        id2label={0: "NO_EVIDENCE", 1: "SUPPORT", 2: "CONTRADICT"},
        label2id={"NO_EVIDENCE": 0, "SUPPORT": 1, "CONTRADICT": 2},
    )
    model = transformers.DebertaV2ForSequenceClassification(config).eval()
    hf = root / "hf"
    model.save_pretrained(str(hf))
    tok.save_pretrained(str(hf))
    return hf
