"""What swifty-sandbox adds to one agent tool call (target ≤ +50 ms), as installed by
`init`: the hook answering the agent, then the rewritten command running confined,
against the agent running the plain command itself.

    python -m benchmarks.agent_overhead [--runs N] [--no-rules] [--launcher NAME=PATH]…

Per call: `swifty-sandbox hook claude-code` with Claude Code's JSON on stdin (warm: the
warm server of this context, as a person's hook runs after its first call; cold: with
`SWIFTY_DAEMON=off`), then `bash -c <rewritten command>`; the baseline is `bash -c
<command>`; the floor is bare `bwrap --ro-bind / / true` (what any confinement costs).
The cases run interleaved, so a load burst on this shared machine hits all; on a loaded
machine compare the ratios to plain and to bare bwrap, not the milliseconds.
`--launcher NAME=PATH` (repeatable) measures other installs' `swifty-sandbox` in the
same interleaved rounds (before/after: a checkout of the old commit with its own venv),
each hook rewriting to its own install.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope

from .decision_latency import make_project

COMMAND = "git status --short >/dev/null; ls"


def call_ms(argv: list[str], stdin: str, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, text=True, capture_output=True, check=False,
                          env=env, cwd=cwd)
    return (time.perf_counter() - start) * 1000, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-rules", action="store_true",
                        help="without the 90 rules of three layers (what `init` leaves)")
    parser.add_argument("--launcher", action="append", default=[], metavar="NAME=PATH",
                        help="another install's swifty-sandbox, measured alongside")
    args = parser.parse_args()
    launchers = {"this": str(Path(sys.executable).with_name("swifty-sandbox"))}
    for given in args.launcher:
        label, _, path = given.partition("=")
        launchers[label] = path
    base = Path.home() / ".cache" / "swifty-sandbox-bench"  # not under /tmp: a root there
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=base))
    try:
        project, home = make_project(tmp)
        if args.no_rules:
            files = PolicyFiles(project, home)
            for scope in Scope:
                files.rules(scope).unlink()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        payload = json.dumps({"session_id": "s", "transcript_path": "/t.jsonl",
                              "cwd": str(project), "permission_mode": "default",
                              "hook_event_name": "PreToolUse", "tool_name": "Bash",
                              "tool_input": {"command": COMMAND}, "tool_use_id": "t"})
        envs = {"warm": {"HOME": str(home), "PATH": "/usr/bin:/bin"},
                "cold": {"HOME": str(home), "PATH": "/usr/bin:/bin", "SWIFTY_DAEMON": "off"}}
        times: dict[str, list[float]] = {"plain": [], "bwrap": []}
        for label in launchers:
            for case in ("hook warm", "hook cold", "run warm", "run cold"):
                times[f"{label} {case}"] = []
        bwrap = shutil.which("bwrap") or "bwrap"
        for _ in range(args.runs + 1):  # the first round starts the warm servers
            times["plain"].append(call_ms(["bash", "-c", COMMAND], "", envs["cold"],
                                          project)[0])
            times["bwrap"].append(call_ms([bwrap, "--ro-bind", "/", "/", "true"], "",
                                          envs["cold"], project)[0])
            for label, script in launchers.items():
                for kind, env in envs.items():
                    ms, out = call_ms([script, "hook", "claude-code"], payload, env, project)
                    rewritten = json.loads(out)["hookSpecificOutput"]["updatedInput"][
                        "command"]
                    times[f"{label} hook {kind}"].append(ms)
                    times[f"{label} run {kind}"].append(
                        call_ms(["bash", "-c", rewritten], "", env, project)[0])
        median = {k: statistics.median(v[1:]) for k, v in times.items()}
        plain, floor = median["plain"], median["bwrap"]
        print(f"plain {plain:.1f} ms, bare bwrap {floor:.1f} ms")
        for label in launchers:
            for kind in ("warm", "cold"):
                hook, run = median[f"{label} hook {kind}"], median[f"{label} run {kind}"]
                added = hook + run - plain
                print(f"{label} {kind}: hook {hook:.1f} ms + confined run {run:.1f} ms - "
                      f"plain {plain:.1f} ms = +{added:.1f} ms per tool call "
                      f"({added / 50:.2f}x the +50 ms target; hook+run "
                      f"{(hook + run) / plain:.1f}x plain, {(hook + run) / floor:.1f}x "
                      "bare bwrap)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
