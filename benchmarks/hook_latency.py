"""Cold latency of one agent hook call (target ≤ 150 ms), against `python -c pass`.

    python -m benchmarks.hook_latency [--runs N]

Each call is a whole `swifty-sandbox hook AGENT` process reading the agent's JSON on
stdin, as the agent runs it, in a project with three layers of 30 rules.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .decision_latency import make_project


def median_ms(argv: list[str], stdin: str, runs: int, env: dict[str, str],
              cwd: Path) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=stdin, text=True, capture_output=True, check=False,
                       env=env, cwd=cwd)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


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
        floor = median_ms([sys.executable, "-c", "pass"], "", args.runs, env, project)
        check = median_ms([script, "check", "-c", command], "", args.runs, env, project)
        print(f"`python -c pass`: {floor:.1f} ms; cold `check -c` (the same decision, no "
              f"hook): {check:.1f} ms, ratio {check / floor:.2f}x")
        for agent, payload in payloads.items():
            ms = median_ms([script, "hook", agent], json.dumps(payload), args.runs, env,
                           project)
            print(f"cold `hook {agent}` (Bash): {ms:.1f} ms; ratio {ms / floor:.2f}x; "
                  f"{ms / 150:.2f}x the 150 ms target")


if __name__ == "__main__":
    main()
