"""The files a new workspace starts from, shipped as package data (`gitmem._templates`).

On the ground floor so that both `config` (the default `.gitmem.toml`) and `scaffold` (`gitmem init`)
read them without one importing the other."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

TEMPLATES = "gitmem._templates"


def template(rel: str) -> Traversable:
    """A template file or folder inside the installed package (works from a wheel or a checkout)."""
    node = files(TEMPLATES)
    for part in rel.split("/"):
        node = node.joinpath(part)
    return node
