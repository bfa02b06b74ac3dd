"""The shared command corpora (../shared/corpora), and what the blacklist makes of them."""

from __future__ import annotations

import json
from pathlib import Path

from swifty_sandbox.policy.analysis import analyse
from swifty_sandbox.policy.blacklist import check
from swifty_sandbox.policy.types import Request

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT.parent / "shared" / "corpora"
DENIALS = ROOT / "tests" / "data" / "corpus-denials.txt"


def load() -> dict[str, list[str]]:
    return {
        "agent": [json.loads(line) for line in
                  (CORPORA / "agent.jsonl").read_text().splitlines() if line.strip()],
        "nl2bash": (CORPORA / "nl2bash.txt").read_text().splitlines(),
        "tldr": (CORPORA / "tldr.txt").read_text().splitlines(),
    }


def denials(corpora: dict[str, list[str]]) -> list[str]:
    """`category<TAB>corpus<TAB>command` for every command the blacklist denies."""
    lines = []
    for corpus, commands in corpora.items():
        for command in commands:
            match = check(list(analyse(Request.bash(command)).invocations), "/home/user")
            if match is not None:
                lines.append(f"{match.category}\t{corpus}\t{json.dumps(command)}")
    return sorted(lines)


if __name__ == "__main__":  # regenerate: python tests/policy/corpora.py
    DENIALS.write_text("\n".join(denials(load())) + "\n")
    print(f"wrote {DENIALS}")
