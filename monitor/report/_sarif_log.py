"""The SARIF 2.1.0 log of ``trifecta analyze`` and ``trifecta lint``: its envelope, its rules and file locations.

Both commands write one run of the tool ``trifecta-monitor`` (:func:`build_sarif_log`); each rule of the driver
has the same shape (:func:`build_rule`), and a result points at a file the same way
(:func:`build_physical_location`). What the results say is each command's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from monitor import __version__

TOOL_NAME = "trifecta-monitor"
INFORMATION_URI = "https://pypi.org/project/trifecta-monitor/"
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def artifact_uri(file: str) -> str:
    """The SARIF ``artifactLocation.uri`` of a file as given: a ``file:`` URI when absolute, else relative."""
    path = PurePath(file)
    return path.as_uri() if path.is_absolute() else quote(path.as_posix(), safe="/")


def build_physical_location(file: str, line: int | None) -> dict[str, Any]:
    """A SARIF ``physicalLocation``: the file, and ``region.startLine`` when a line is known."""
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(file)}}
    if line is not None:
        physical["region"] = {"startLine": line}
    return physical


def build_rule(
    rule_id: str, *, slug: str, short: str, full: str, level: str, properties: dict[str, Any]
) -> dict[str, Any]:
    """One rule of the driver: ``rule_id``, a name made of ``slug`` (``hint-missing`` → ``HintMissing``), the
    short and full descriptions (the full one is also the help), the default level and the properties."""
    return {
        "id": rule_id,
        "name": "".join(part.capitalize() for part in slug.split("-")),
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": full},
        "defaultConfiguration": {"level": level},
        "properties": properties,
    }


def build_sarif_log(
    rules: Sequence[dict[str, Any]],
    results: Sequence[dict[str, Any]],
    *,
    invocation: dict[str, Any],
    properties: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run of ``trifecta-monitor``: the driver with ``rules``, one ``invocation``, the
    ``results`` and, when given, the run's ``properties``."""
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": list(rules),
            }
        },
        "invocations": [invocation],
        "results": list(results),
    }
    if properties is not None:
        run["properties"] = properties
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
