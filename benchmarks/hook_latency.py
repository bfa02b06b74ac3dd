"""Cold latency of one agent hook call (target ≤ 150 ms), against `python -c pass`.

    python -m benchmarks.hook_latency [--runs N]

Each call is a whole `swifty-sandbox hook AGENT` process reading the agent's JSON on
stdin, as the agent runs it, in a project with three layers of 30 rules.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .decision_latency import make_project
from .timing import interleaved_ms, medians


def interleaved_calls_ms(cases: dict[str, tuple[list[str], str]], runs: int,
                         env: dict[str, str], cwd: Path) -> dict[str, float]:
    """Median wall time per case (`timing.interleaved_ms`): each a whole process, its
    stdin given."""
    def call(argv: list[str], stdin: str) -> Callable[[], object]:
        return lambda: subprocess.run(argv, input=stdin, text=True, capture_output=True,
                                      check=False, env=env, cwd=cwd)

    return medians(interleaved_ms({name: call(*case) for name, case in cases.items()},
                                  runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    script = str(Path(sys.executable).with_name("swifty-sandbox"))
    with tempfile.TemporaryDirectory() as tmp:
        project, home = make_project(Path(tmp))
        env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
        command = "git status && npm test -- --watch=false | tee out.log"
        payloads = {
            "claude-code": {"session_id": "s", "transcript_path": "/t.jsonl",
                            "cwd": str(project), "permission_mode": "default",
                            "hook_event_name": "PreToolUse", "tool_name": "Bash",
                            "tool_input": {"command": command}, "tool_use_id": "t"},
            "cursor": {"hook_event_name": "beforeShellExecution", "command": command,
                       "cwd": str(project), "workspace_roots": [str(project)]},
        }
        cases = {"python -c pass": ([sys.executable, "-c", "pass"], ""),
                 "check -c (no hook)": ([script, "check", "-c", command], "")}
        for agent, payload in payloads.items():
            cases[f"hook {agent}"] = ([script, "hook", agent], json.dumps(payload))
        result = interleaved_calls_ms(cases, args.runs, env, project)
        floor = result["python -c pass"]
        for name, ms in result.items():
            print(f"cold `{name}`: {ms:.1f} ms; ratio {ms / floor:.2f}x"
                  + (f"; {ms / 150:.2f}x the 150 ms target" if name.startswith("hook")
                     else ""))

if __name__ == "__main__":
    main()
