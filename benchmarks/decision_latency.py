"""Decision latency of `check`, in process and as a cold command.

    python -m benchmarks.decision_latency [--rounds N]

1. In-process: argv Bash requests and file requests against three layers of 30 rules
   each (user, project, local); p50 and p99 per decision. Target: p50 ≤ 50 µs. Each
   decision is also a line of the session log; its cost is shown as the ratio to the
   same decisions with `log.enabled: false`.
2. Cold start: `swifty-sandbox check -- git status` as a whole process, against
   `python -c pass` as the floor, reported as a ratio (machines here are noisy).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

import yaml

from swifty_sandbox import Request, Sandbox, Tool
from swifty_sandbox.policy.files import PolicyFiles
from swifty_sandbox.policy.types import Scope

from .timing import latencies_us, median_ms, percentile

TOOLS = ["git", "npm", "make", "cargo", "pytest", "docker", "kubectl", "rm", "curl", "ls"]


def layer_rules(seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    rules = []
    for i in range(30):
        kind = i % 3
        effect = rng.choice(["allow", "deny", "ask"])
        if kind == 0:
            rules.append({"rule": f"Bash({rng.choice(TOOLS)} {rng.choice(['*', 'sub*'])})",
                          "effect": effect})
        elif kind == 1:
            rules.append({"rule": f"Bash({rng.choice(TOOLS)}-{i} --flag *)", "effect": effect})
        else:
            rules.append({"rule": f"ReadFile(**/*.ext{i})", "effect": effect})
    return rules


def make_project(root: Path) -> tuple[Path, Path]:
    home = root / "home"
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".swifty").mkdir()
    (home / ".swifty").mkdir()
    for seed, path in enumerate([home / ".swifty" / "permissions.yaml",
                                 project / ".swifty" / "permissions.yaml",
                                 PolicyFiles(project, home).rules(Scope.LOCAL)]):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(layer_rules(seed), sort_keys=False))
    return project, home


def in_process(project: Path, home: Path, rounds: int) -> None:
    box = Sandbox(project, home=home)
    rng = random.Random(7)
    argvs = [[rng.choice(TOOLS), rng.choice(["status", "test", "-la", "sub1", "x"]),
              rng.choice(["--flag", "a", "b"])] for _ in range(200)]
    requests = {
        "argv (Bash)": [Request.bash_argv(a) for a in argvs],
        "file (ReadFile)": [Request.file(Tool.READ_FILE, f"src/m{i}/f.ext{i % 40}")
                            for i in range(200)],
    }
    config = home / ".swifty" / "config.yaml"
    config.write_text("log:\n  enabled: false\n")
    unlogged = Sandbox(project, home=home)
    config.unlink()
    for name, batch in requests.items():
        samples = latencies_us(box.check, batch, rounds)
        p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
        bare = percentile(latencies_us(unlogged.check, batch, rounds), 0.5)
        print(f"{name:16} p50 {p50:7.1f} µs  p99 {p99:7.1f} µs  "
              f"(p50 = {p50 / 50:.2f}x the 50 µs target, n={len(samples)}; "
              f"{p50 / bare:.2f}x the {bare:.1f} µs without the session log)")


def cold_start(project: Path, home: Path, runs: int) -> None:
    script = Path(sys.executable).with_name("swifty-sandbox")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    floor = median_ms([sys.executable, "-c", "pass"], runs, cwd=project, env=env)
    check = median_ms([str(script), "check", "--", "git", "status"], runs, cwd=project,
                      env=env)
    print(f"cold `check -- git status`: {check:.1f} ms; `python -c pass`: {floor:.1f} ms; "
          f"ratio {check / floor:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project, home = make_project(Path(tmp))
        in_process(project, home, args.rounds)
        cold_start(project, home, args.runs)


if __name__ == "__main__":
    main()
