"""The JSON contract: one JSON Schema (draft 2020-12) per `--json` result type.

Shipped inside the package so programs can validate gitmem's output against the schemas of the
installed version. Schemas reference each other by `$id` (`urn:gitmem:schema:<name>`); register
them all (e.g. in a `referencing.Registry`) before validating. See docs/json-contract.md.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

ID_PREFIX = "urn:gitmem:schema:"


def names() -> list[str]:
    """Names of the shipped schemas ("recall", "result", "error", ...)."""
    return sorted(p.name[:-5] for p in files(__name__).iterdir() if p.name.endswith(".json"))


def load(name: str) -> dict[str, Any]:
    """The schema `name` as a dict."""
    data: dict[str, Any] = json.loads(files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8"))
    return data
