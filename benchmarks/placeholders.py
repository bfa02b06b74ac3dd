"""What the hidden files' placeholders (`sandbox/linux/placeholders.py`) cost a run.

    python -m benchmarks.placeholders [--runs N] [--files N]

A home with N hidden files (`~/.docker/cert-I.pem`, the profile's `~/.docker/*.pem`),
outside any git work tree, so each gets a placeholder. Interleaved (on, off, on, off,
…): `Sandbox.run(["true"])` with the placeholders, and with `placeholders.bind_fds`
patched to bind none (every hidden file on /dev/null, as before; here only). Reported:
the median wall time of each, the difference per 100 placeholders, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.linux import placeholders


def _none(*_args: object) -> dict[str, int]:
    return {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--files", type=int, default=200)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(dir=Path.home() / ".cache"))
    home, project = base / "home", base / "home" / "project"
    (home / ".docker").mkdir(parents=True)
    project.mkdir()
    for i in range(args.files):
        (home / ".docker" / f"cert-{i}.pem").write_text("secret\n")
    box = Sandbox(project, home=home)
    real = placeholders.bind_fds
    times: dict[bool, list[float]] = {True: [], False: []}
    box.run(["true"])  # warm: caches, the first compile
    for _ in range(args.runs):
        for on in (True, False):
            placeholders.bind_fds = real if on else _none  # type: ignore[assignment]
            start = time.perf_counter()
            result = box.run(["true"])
            times[on].append(time.perf_counter() - start)
            assert result.exit_code == 0, result.stderr
    placeholders.bind_fds = real
    shutil.rmtree(base)
    with_ms, without_ms = (statistics.median(times[k]) * 1000 for k in (True, False))
    print(f"{args.files} hidden files, {args.runs} interleaved pairs, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"with placeholders {with_ms:.1f} ms, on /dev/null {without_ms:.1f} ms: ratio "
          f"{with_ms / without_ms:.3f}, "
          f"{(with_ms - without_ms) * 100 / args.files:.1f} ms per 100 placeholders")


if __name__ == "__main__":
    main()
