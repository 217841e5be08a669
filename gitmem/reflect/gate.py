"""The gate model output passes before it reaches a page: deterministic, pure, no model.

A small model writes fluent nonsense ("The FACTS are a list of facts about the entity, ...",
"The most important facts from the log are: 1. ..."), so an entity summary or an inferred Retain
bullet is kept only when it is grounded in what it was made from:

1. not empty: at least MIN_WORDS words with letters (a bare entity name is not a summary);
2. no prompt echo: no run of ECHO_WORDS consecutive words shared with the prompt's instructions
   (the prompt with its data sections cut out), unless the facts themselves hold that run;
3. no run of ECHO_WORDS consecutive words said twice (a small model's loop: "the new address is
   Rua Augusta 12, and the new address is Rua Augusta 12");
4. every name and number present in the source: a name is an @mention or a capitalised word
   (a sentence's first word only when it is not a common function word), present when the source
   holds it as a word, case-insensitively; a number is every digit run;
5. for Retain bullets also: most content words (at least GROUNDED_SHARE of the words of 4+
   letters that are not function words) occur in the log, so a bullet restates the log.
`problem()` returns the first failed rule as a short reason, or None when the text passes.
"""

from __future__ import annotations

import re

from gitmem.lazyre import lazy

MIN_WORDS = 3
ECHO_WORDS = 4
GROUNDED_SHARE = 0.6

_WORD = lazy(r"[^\W_]+(?:['’][^\W_]+)*")
_NAME = lazy(r"@?[^\W\d_][\w'’]*(?:[-.][^\W_][\w'’]*)*")
_DIGITS = lazy(r"\d+")
_SENTENCE = lazy(r"(?<=[.!?:;])\s+")
_DATA = lazy(r"<<<DATA[^\n]*>>>\n.*?\n<<<END DATA>>>", re.S)
# Sentence-initial words that are not names. Anything capitalised mid-sentence is a name.
_FUNCTION = frozenset("""a an and are as at be but by for from had has have he her here his i in is it its
my no not of on or our she so that the their them then there these they this those to was we were what
when where which who will with you your also after before during since until while both each all one
""".split())


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _vocabulary(text: str) -> set[str]:
    """Every word of `text`, lowercased, also split at "-", "'" and "." ("@The-Castle" -> the, castle)."""
    out = set(_words(text))
    for w in list(out):
        out.update(p for p in re.split(r"['’.]", w) if p)
    return out


def _grams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def instructions(*prompts: str) -> str:
    """The instruction text of prompts: everything outside their <<<DATA ...>>> sections."""
    return "\n".join(_DATA.sub(" ", p) for p in prompts)


def _unknown_names(text: str, vocab: set[str]) -> list[str]:
    bad: list[str] = []
    for sentence in _SENTENCE.split(text):
        first = True
        for m in _NAME.finditer(sentence):
            token = m.group()
            initial, first = first, False
            if not (token.startswith("@") or token[0].isupper()):
                continue
            if initial and not token.startswith("@") and token.lower() in _FUNCTION:
                continue
            parts = [p.lower() for p in re.split(r"[-.'’@]", token) if p]
            if not all(p in vocab for p in parts):
                bad.append(token)
    return bad


def problem(text: str, source: str, prompt_instructions: str, *, grounded: bool = False) -> str | None:
    """Why `text` (model output made from `source`) may not be curated, or None (see the module
    docstring); `grounded` adds rule 5 (Retain bullets)."""
    words = _words(text)
    if len([w for w in words if any(c.isalpha() for c in w)]) < MIN_WORDS:
        return "empty or too short"
    source_words = _words(source)
    echo = _grams(words, ECHO_WORDS) & (_grams(_words(prompt_instructions), ECHO_WORDS) - _grams(source_words, ECHO_WORDS))
    if echo:
        return f"repeats the prompt ({' '.join(sorted(echo)[0])!r})"
    runs = [tuple(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)]
    again = sorted({r for r in runs if runs.count(r) > 1})
    if again:
        return f"repeats itself ({' '.join(again[0])!r})"
    vocab = _vocabulary(source)
    names = _unknown_names(text, vocab)
    if names:
        return f"names something the facts do not ({names[0][:40]!r})"
    numbers = set(_DIGITS.findall(source))
    missing = [n for n in _DIGITS.findall(text) if n not in numbers]
    if missing:
        return f"has a number the facts do not ({missing[0][:20]!r})"
    if grounded:
        content = [w for w in words if len(w) >= 4 and w not in _FUNCTION]
        if content:
            stems = {w[:5] for w in vocab}
            share = sum(1 for w in content if w in vocab or w[:5] in stems) / len(content)
            if share < GROUNDED_SHARE:
                return f"not grounded in the log ({share:.0%} of its words are in it)"
    return None
