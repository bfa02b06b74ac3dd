"""What the violation observer (`sandbox/linux/observe.py`) costs on file-heavy work.

    python -m benchmarks.violations [--runs N] [--files N] [--backend bwrap|landlock]

Two workloads, each run confined through `Sandbox.run` with the observer and without it
(`observe.available` patched off here, in the benchmark only), interleaved (on, off, on,
off, …) so that the machine's noise falls on both alike:

1. a C build: `make` of N small C files that include the usual libc headers (every
   header an open the observer is told of, every object file a create);
2. a real test suite: pytest on this repository's `tests/policy/test_rules.py`
   (imports, bytecode reads, temp files).

Reported: the median wall time of each, and the ratio on/off (the target: ≤ 1.05).
"""

from __future__ import annotations

import argparse
import os
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
    return "make -s clean && make -s -j1"


def timed(box: Sandbox, command: str, cwd: str, observed: bool) -> float:
    original = observe.available
    if not observed:
        observe.available = lambda: False
    try:
        start = time.monotonic()
        result = box.run(command, cwd=cwd, timeout=600)
        elapsed = time.monotonic() - start
    finally:
        observe.available = original
    if result.exit_code != 0:
        sys.exit(f"{command!r} failed ({result.exit_code}): {result.stderr[-2000:]}")
    return elapsed


def compare(name: str, box: Sandbox, command: str, cwd: str, runs: int) -> None:
    timed(box, command, cwd, True)  # warm the caches
    on: list[float] = []
    off: list[float] = []
    ratios: list[float] = []
    for _ in range(runs):
        a = timed(box, command, cwd, True)
        b = timed(box, command, cwd, False)
        on.append(a)
        off.append(b)
        ratios.append(a / b)
    print(f"{name}: observer on {statistics.median(on):.3f} s, off "
          f"{statistics.median(off):.3f} s, ratio (median of pairs) "
          f"{statistics.median(ratios):.3f}  (pairs: "
          f"{', '.join(f'{r:.3f}' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--backend", default=os.environ.get("SWIFTY_BACKEND", "bwrap"))
    parser.add_argument("--only", choices=("c", "pytest"), default=None)
    args = parser.parse_args()
    os.environ["SWIFTY_BACKEND"] = args.backend
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(dir=Path.home()) as folder:
        root = Path(folder)
        (root / ".git").mkdir()
        if args.only in (None, "c"):
            build = c_project(root, args.files)
            compare(f"C build ({args.files} files)", Sandbox(root), build, str(root),
                    args.runs)
        if args.only in (None, "pytest"):
            suite = (f"{sys.executable} -m pytest -q -p no:cacheprovider "
                     f"{repo}/tests/policy/test_rules.py")
            compare("pytest tests/policy/test_rules.py", Sandbox(repo), suite, str(repo),
                    args.runs)


if __name__ == "__main__":
    main()
