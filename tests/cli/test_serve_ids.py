"""Every answer of `serve` is strict JSON, whatever id a request carries."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("token", ["1e400", "-1e400", "NaN", "Infinity"])
def test_serve_answers_stay_json_for_a_non_finite_id(project: Path, home: Path,
                                                     token: str) -> None:
    """`{"id": 1e400, …}` was read as infinity and echoed as `Infinity`, which no
    strict JSON reader (the agent's) accepts: its loop broke on our answer."""
    import json
    import subprocess
    import sys

    line = f'{{"id": {token}, "tool": "ReadFile", "path": "README"}}\n'
    done = subprocess.run([sys.executable, "-m", "swifty_sandbox.cli", "serve", "--project",
                           str(project)], input=line.encode(), capture_output=True,
                          timeout=60, cwd=project.parent)
    answers = done.stdout.decode().splitlines()
    assert answers, done.stderr
    def strict(token: str) -> None:
        pytest.fail(f"not JSON: {token} in {answers}")

    for answer in answers:
        assert json.loads(answer, parse_constant=strict)["type"] == "error"


