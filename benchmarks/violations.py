"""What the violation observer (`sandbox/linux/observe.py`) costs on file-heavy work.

    python -m benchmarks.violations [--runs N] [--files N] [--backend bwrap|landlock]

Two workloads, each run confined through `Sandbox.run` with the observer and without it
(`observe.available` patched off here, in the benchmark only), interleaved (on, off, on,
off, …) so that the machine's noise falls on both alike:

1. a C build: `make` of N small C files that include the usual libc headers (every
   header an open the observer is told of, every object file a create);
2. a test suite: pytest on 40 generated test files of 10 tests each, every test
   writing, reading and listing files in its `tmp_path` (imports, bytecode, temp
   directories: the calls the observer is told of), cache and bytecode writes on.

The C build's objects are removed before each run, outside the sandbox (a clean is not
the build).

Reported: the median wall time of each, and the ratio on/off (the target: ≤ 1.05).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.linux import observe

_HEADERS = ("stdio.h", "stdlib.h", "string.h", "errno.h", "unistd.h", "fcntl.h",
            "sys/stat.h", "math.h", "time.h", "ctype.h")


def c_project(root: Path, files: int) -> str:
    for i in range(files):
        (root / f"f{i}.c").write_text(
            "".join(f"#include <{h}>\n" for h in _HEADERS)
            + f"int f{i}(int x) {{ return x * {i} + (int)strlen(\"abc\"); }}\n")
    objects = " ".join(f"f{i}.o" for i in range(files))
    (root / "Makefile").write_text(f"all: lib.a\nlib.a: {objects}\n\tar rcs $@ $^\n"
                                   "%.o: %.c\n\tcc -O0 -c $< -o $@\n"
                                   "clean:\n\trm -f *.o lib.a\n")
    return "make -s -j1"


def _cpu() -> float:
    own, children = (resource.getrusage(who) for who in
                     (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def test_suite(root: Path, files: int = 40) -> str:
    tests = root / "suite"
    tests.mkdir()
    for i in range(files):
        (tests / f"test_m{i}.py").write_text(
            "import json, os, pathlib\n"
            "import pytest\n\n"
            "@pytest.mark.parametrize('n', range(10))\n"
            "def test_files(tmp_path: pathlib.Path, n: int) -> None:\n"
            "    for j in range(5):\n"
            "        (tmp_path / f'f{j}.json').write_text(json.dumps({'n': n, 'j': j}))\n"
            "    assert len(os.listdir(tmp_path)) == 5\n"
            "    assert json.loads((tmp_path / 'f4.json').read_text())['j'] == 4\n")
    return f"{sys.executable} -m pytest -q {tests}"


def _clean(root: Path) -> None:
    for built in (*root.glob("*.o"), root / "lib.a"):
        built.unlink(missing_ok=True)


def timed(box: Sandbox, command: str, cwd: str, observed: bool) -> tuple[float, float]:
    """Wall time, and CPU time (the command's processes and this one's, the observer's
    thread included: less noisy on a shared machine than the wall clock)."""
    _clean(Path(cwd))
    original = observe.available
    if not observed:
        observe.available = lambda: False
    try:
        start, cpu = time.monotonic(), _cpu()
        result = box.run(command, cwd=cwd, timeout=600)
        elapsed, cpu = time.monotonic() - start, _cpu() - cpu
    finally:
        observe.available = original
    if result.exit_code != 0:
        sys.exit(f"{command!r} failed ({result.exit_code}): {result.stderr[-2000:]}")
    return elapsed, cpu


def compare(name: str, box: Sandbox, command: str, cwd: str, runs: int) -> None:
    timed(box, command, cwd, True)  # warm the caches
    on: list[tuple[float, float]] = []
    off: list[tuple[float, float]] = []
    for i in range(runs):  # alternate which goes first: neither always meets a cold cache
        pair = [timed(box, command, cwd, first) for first in ((True, False) if i % 2
                                                               else (False, True))]
        (a, b) = pair if i % 2 else pair[::-1]
        on.append(a)
        off.append(b)
    for what, index in (("wall", 0), ("cpu", 1)):
        ratios = [a[index] / b[index] for a, b in zip(on, off, strict=True)]
        print(f"{name} [{what}]: observer on {statistics.median(a[index] for a in on):.3f}"
              f" s, off {statistics.median(b[index] for b in off):.3f} s, ratio on/off "
              f"(median of pairs) {statistics.median(ratios):.3f}, of the sums "
              f"{sum(a[index] for a in on) / sum(b[index] for b in off):.3f}  (pairs: "
              f"{', '.join(f'{r:.2f}' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--backend", default=os.environ.get("SWIFTY_BACKEND", "bwrap"))
    parser.add_argument("--only", choices=("c", "pytest"), default=None)
    args = parser.parse_args()
    os.environ["SWIFTY_BACKEND"] = args.backend
    with tempfile.TemporaryDirectory(dir=Path.home()) as folder:
        root = Path(folder)
        (root / ".git").mkdir()
        if args.only in (None, "c"):
            build = c_project(root, args.files)
            compare(f"C build ({args.files} files)", Sandbox(root), build, str(root),
                    args.runs)
        if args.only in (None, "pytest"):
            compare("pytest (400 tests in 40 files)", Sandbox(root), test_suite(root),
                    str(root), args.runs)


if __name__ == "__main__":
    main()
