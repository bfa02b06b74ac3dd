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


def interleaved_ms(cases: dict[str, tuple[list[str], str]], runs: int,
                   env: dict[str, str], cwd: Path) -> dict[str, float]:
    """Median wall time per case, the cases run in turn (a load burst on this shared
    machine then hits them all alike, not one whole block)."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, (argv, stdin) in cases.items():
            start = time.perf_counter()
            subprocess.run(argv, input=stdin, text=True, capture_output=True, check=False,
                           env=env, cwd=cwd)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


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
        result = interleaved_ms(cases, args.runs, env, project)
        floor = result["python -c pass"]
        for name, ms in result.items():
            print(f"cold `{name}`: {ms:.1f} ms; ratio {ms / floor:.2f}x"
                  + (f"; {ms / 150:.2f}x the 150 ms target" if name.startswith("hook")
                     else ""))

if __name__ == "__main__":
    main()
