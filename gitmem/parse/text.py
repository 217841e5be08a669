"""Bytes to text and text to lines: the one rule every gitmem module uses for line numbers."""

from __future__ import annotations

import re

from gitmem.lazyre import lazy

BINARY_SNIFF = 8192
# An HTML comment (an unclosed one runs to the end): markup for whoever edits the file (template
# guidance, the markers of generated blocks), never memory.
_COMMENT = lazy(r"<!--.*?(?:-->|$)", re.S)


def strip_comments(text: str) -> str:
    """`text` with every HTML comment replaced by a space."""
    return _COMMENT.sub(" ", text) if "<!--" in text else text


def split_lines(text: str) -> list[str]:
    """Split on "\\n" only and drop one trailing "\\r" per line.

    Why not str.splitlines(): it also splits on \\v, \\f, \\x1c-\\x1e, \\x85, \\u2028 and lone \\r,
    while git (whose diffs give us line numbers) counts only "\\n". Using git's rule keeps a
    block's line range identical to the line numbers in `git log -p` and `git blame`.
    """
    lines = text.split("\n")
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    return lines


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 (a leading BOM dropped), falling back to U+FFFD replacement; the bool says it fell back."""
    try:
        text, replaced = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, replaced = data.decode("utf-8", errors="replace"), True
    if text.startswith("\ufeff"):
        # A BOM is an encoding mark, not content; left in, it would hide a front matter "---".
        text = text[1:]
    return text, replaced


def is_binary(data: bytes) -> bool:
    """Git's own heuristic: a NUL byte in the first 8 KiB."""
    return b"\x00" in data[:BINARY_SNIFF]
