"""Text in a document that is aimed at the model rather than the reader (prompt injection).

Two defences, after OWASP's LLM01 (Prompt Injection) guidance for retrieval-augmented apps:

* :func:`neutralise_control_tokens`: chat-template control markers (``<|im_start|>``,
  ``<|im_end|>``, ``[INST]``, ``<s>`` ...) inside a passage are broken up before the passage goes
  into a prompt, so the model reads them as text, never as the start or end of a turn. The
  stored text is not changed (citations and evidence offsets point into it).
* :func:`instruction_cues`: phrases that read as instructions to an AI ("ignore the previous
  instructions", "you are an AI", "say that ...") are found so the app can warn next to the
  passage. A cue is a warning, not a verdict: a paper *about* prompt injection has them too.
  They are found once per chunk, when the store writes it (and, for chunks stored before, when
  the store upgrades its catalog: :mod:`verifai_desktop.store.migrations`), and kept with it;
  retrieval hands them on with each passage.
"""

from __future__ import annotations

import re

_CONTROL_TOKEN = re.compile(
    r"<\|[^|<>\s]{1,40}\|>"  # ChatML / Qwen / Llama-3 / Phi: <|im_start|>, <|eot_id|>, <|end|>
    r"|\[/?INST\]"  # Llama-2 / Mistral
    r"|<<\s*/?SYS\s*>>"  # Llama-2 system block
    r"|</?s>"  # sentencepiece BOS / EOS as text
    r"|<start_of_turn>|<end_of_turn>",  # Gemma
    re.IGNORECASE,
)

_CUES = re.compile(
    r"\b(?:ignore|disregard|forget) (?:all |any )?(?:of )?(?:the |your )?"
    r"(?:previous|prior|above|earlier|other|original) "
    r"(?:instructions?|prompts?|passages?|messages?|rules?|context)"
    r"|\byou are (?:now )?(?:an? )?(?:ai|assistant|chatbot|language model|llm)\b"
    r"|\b(?:ai|llm|assistant|chatbot|language model)s?(?: reading this)?,? (?:must|should|will)"
    r" (?:say|answer|respond|reply|state|write|tell)\b"
    r"|(?:^|(?<=[.!?:;\n]))\s*(?:please\s+)?(?:always\s+|now\s+|instead\s+)?"
    r"(?:say|respond|reply|tell the user|answer only)\b(?!:)"
    r"|\b(?:reveal|print|repeat|show) (?:your|the) (?:system )?(?:prompt|instructions)\b"
    r"|\bnew instructions?:",
    re.IGNORECASE,
)


_SENTENCE_END = re.compile(r"[.!?\n]")


def neutralise_control_tokens(text: str) -> str:
    """``text`` with every chat-template control marker broken by a space after its first
    character (``<|im_end|>`` -> ``< |im_end|>``), so no tokenizer maps it to a special token.

    Returns the text unchanged when it holds none (the common case).
    """
    if "<" not in text and "[" not in text:
        return text
    return _CONTROL_TOKEN.sub(lambda m: m.group(0)[0] + " " + m.group(0)[1:], text)


def instruction_cues(text: str) -> tuple[str, ...]:
    """The phrases in ``text`` that read as instructions to an AI, each from its cue to the end
    of its sentence (at most 80 more characters), in order and once, plus
    ``"chat control token"`` when the text holds a control marker.

    Returns ``()`` for ordinary text.
    """
    found = []
    for m in _CUES.finditer(text):
        tail = _SENTENCE_END.search(text, m.end(), min(len(text), m.end() + 80))
        phrase = text[m.start() : tail.start() if tail else min(len(text), m.end() + 80)]
        found.append(" ".join(phrase.split()).strip(",:; "))
    if _CONTROL_TOKEN.search(text):
        found.append("chat control token")
    return tuple(dict.fromkeys(found))
