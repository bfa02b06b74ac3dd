"""Shell analysis and blacklist: decision latency and corpus throughput.

    python -m benchmarks.shell_analysis [--rounds N]

1. `Sandbox.check()` on every command of ../shared/corpora/agent.jsonl (heredocs
   included): p50 and p99 per decision. Target: p50 ≤ 300 µs.
2. Throughput on one core over nl2bash + tldr (analysis + blacklist): commands/s.
   Target: ≥ 3,000/s.
3. Cold `check -- git status` (an argv: no shell parser is imported) and cold
   `check -c 'git status'`, against `python -c pass`, as ratios.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from swifty_sandbox import Sandbox
from swifty_sandbox.policy.analysis import analyse
from swifty_sandbox.policy.blacklist import check
from swifty_sandbox.policy.types import Request

from .timing import latencies_us, median_ms, percentile

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def latency(rounds: int) -> None:
    commands = [json.loads(line) for line in
                (CORPORA / "agent.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".git").mkdir()
        box = Sandbox(tmp, mode="bypassPermissions")
        samples = latencies_us(box.check, commands, rounds)
    p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
    print(f"agent.jsonl decisions: p50 {p50:.0f} µs, p99 {p99:.0f} µs "
          f"(p50 = {p50 / 300:.2f}x the 300 µs target; n={len(samples)})")


def throughput() -> None:
    commands = ((CORPORA / "nl2bash.txt").read_text().splitlines()
                + (CORPORA / "tldr.txt").read_text().splitlines())
    start = time.perf_counter()
    for command in commands:
        check(list(analyse(Request.bash(command)).invocations), "/home/user")
    elapsed = time.perf_counter() - start
    rate = len(commands) / elapsed
    print(f"nl2bash + tldr: {len(commands)} commands in {elapsed:.2f} s = {rate:,.0f}/s "
          f"on one core ({rate / 3000:.1f}x the 3,000/s target)")


def cold(runs: int) -> None:
    script = Path(sys.executable).with_name("swifty-sandbox")
    floor = median_ms([sys.executable, "-c", "pass"], runs)
    argv = median_ms([str(script), "check", "--", "git", "status"], runs)
    string = median_ms([str(script), "check", "-c", "git status"], runs)
    print(f"cold check: argv {argv:.0f} ms ({argv / floor:.1f}x python -c pass), "
          f"shell string {string:.0f} ms ({string / floor:.1f}x), floor {floor:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    latency(args.rounds)
    throughput()
    cold(args.runs)


if __name__ == "__main__":
    main()
