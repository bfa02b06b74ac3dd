"""Findings → SARIF 2.1.0, for code-scanning UIs."""

from __future__ import annotations

from pathlib import Path

from swifty_sandbox.messages import t
from swifty_sandbox.policy.audit import FINDINGS, Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/swifty-sandbox/swifty-sandbox"


def _uri(file: str, base: Path) -> str:
    path = Path(file)
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


def to_sarif(findings: list[Finding], version: str, base: Path) -> dict[str, object]:
    ids = list(FINDINGS)
    rules = [{
        "id": id_,
        "name": "".join(part.capitalize() for part in id_.split("-")),
        "shortDescription": {"text": id_.replace("-", " ")},
        "help": {"text": t(f"audit.{id_}.hint")},
        "defaultConfiguration": {"level": level},
    } for id_, level in FINDINGS.items()]
    results = [{
        "ruleId": f.id,
        "ruleIndex": ids.index(f.id),
        "level": f.level,
        "message": {"text": f"{f.message} {f.hint}"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": _uri(f.file, base)},
            "region": {"startLine": f.line, "startColumn": f.column},
        }}],
    } for f in findings]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "swifty-sandbox", "version": version,
                                "informationUri": INFORMATION_URI, "rules": rules}},
            "results": results,
        }],
    }
