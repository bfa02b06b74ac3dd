"""What the violation observer (`sandbox/linux/observe.py`) costs on file-heavy work.

    python -m benchmarks.violations [--runs N] [--files N] [--backend bwrap|landlock]
                                    [--only c|pytest|suite|true] [--base CHECKOUT]

Four workloads, each run confined through `Sandbox.run` with the observer and without
it (`observe.available` patched off, in the benchmark's worker only), interleaved (on,
off, on, off, …, which goes first alternating) so that the machine's noise falls on
all alike:

1. a C build: `make` of N small C files that include the usual libc headers (every
   header an open the observer is not told of, every object file a create);
2. a test suite: pytest on 40 generated test files of 10 tests each, every test
   writing, reading and listing files in its `tmp_path` (imports, bytecode, temp
   directories: the calls the observer is told of), cache and bytecode writes on;
3. a real test suite: five of this project's own `tests/policy` files (rule files,
   the "always allow" store, paths, settings, file decisions: 144 tests), copied
   with `tests/conftest.py` and `pyproject.toml` into the project, run by this
   checkout's venv (the package importable read-only from its checkout). It is what an
   agent runs: a suite that imports a few hundred modules, writes bytecode and pytest's
   cache, makes a fake home and project per test (its `HOME` in the project) and
   writes, locks and renames policy files in them; not made to be write-heavy as (2)
   is, so the two bracket what a test suite pays;
4. `true`: what a run costs whatever the command does (bwrap's own set-up calls are
   notified too: the filter is loaded before bwrap), four times `--runs` rounds.

`--base CHECKOUT`: also the observer as it is in another checkout (say, main before a
change), run by that checkout's own `.venv` — "before" — beside this one's, "after",
in the same rounds (before, after, off). Each side runs in a worker process of its
own venv, which times `Sandbox.run` alone.

The C build's objects are removed before each run, outside the sandbox (a clean is not
the build). Reported: per observed side, the calls its filter notified in the untimed
first run (by syscall) and the median time its thread took to read each; the median
wall time of each, the ratio on/off per pair and of the sums (the target: ≤ 1.05),
and the load average (on a 2-core machine other people's load above 2 swamps the
ratios: compare them only at a low one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_HEADERS = ("stdio.h", "stdlib.h", "string.h", "errno.h", "unistd.h", "fcntl.h",
            "sys/stat.h", "math.h", "time.h", "ctype.h")

# A worker: one `Sandbox.run` per request line ({"command", "cwd", "observed", "clean",
# "count"}), its wall time back; the observer patched off where not observed. With
# "count" (the untimed warm-up run), the observed calls counted by syscall and the
# median time the observer's thread spends reading each (`Observer._read`: the path,
# while the call waits), through a wrapper only that run has. Standard library and the
# checkout's own package only, so any checkout's venv can run it.
_WORKER = r"""
import collections, json, platform, sys, time
from pathlib import Path
from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.linux import observe
available, read, calls = observe.available, observe.Observer._read, observe._calls

class Named(tuple):  # a call's entry, with the syscall's name for the count
    name = ""

def named():
    numbers = {nr: name for name, nr in observe._NUMBERS[platform.machine()].items()}
    out = {}
    for nr, entry in calls().items():
        out[nr] = Named(entry)
        out[nr].name = numbers[nr]
    return out

counts, spent = collections.Counter(), []
def counted(self, pid, call, args):
    start = time.perf_counter_ns()
    try:
        return read(self, pid, call, args)
    finally:
        spent.append(time.perf_counter_ns() - start)
        counts[call.name] += 1

boxes = {}
for line in sys.stdin:
    ask = json.loads(line)
    for built in ask["clean"]:
        Path(built).unlink(missing_ok=True)
    observe.available = available if ask["observed"] else (lambda: False)
    observe.Observer._read = counted if ask["count"] else read
    observe._calls = named if ask["count"] else calls
    counts.clear(), spent.clear()
    box = boxes.get(ask["cwd"]) or boxes.setdefault(ask["cwd"], Sandbox(ask["cwd"]))
    start = time.monotonic()
    result = box.run(ask["command"], cwd=ask["cwd"], timeout=600)
    elapsed = time.monotonic() - start
    print(json.dumps({"wall": elapsed, "exit": result.exit_code,
                      "stderr": result.stderr[-2000:], "counts": counts,
                      "read_us": sorted(spent)[len(spent) // 2] / 1000 if spent else 0}),
          flush=True)
"""

class Worker:
    """A checkout's `Sandbox.run`, in a process of its own venv."""

    def __init__(self, python: str, checkout: Path) -> None:
        self.proc = subprocess.Popen([python, "-c", _WORKER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=checkout)

    def run(self, command: str, cwd: str, observed: bool, count: bool = False
            ) -> dict[str, Any]:
        """One run; its answer (`wall`; with `count`, `counts` and `read_us`)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        clean = [str(p) for p in (*Path(cwd).glob("*.o"), Path(cwd) / "lib.a")]
        self.proc.stdin.write(json.dumps({"command": command, "cwd": cwd,
                                          "observed": observed, "clean": clean,
                                          "count": count}) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        if answer["exit"] != 0:
            sys.exit(f"{command!r} failed ({answer['exit']}): {answer['stderr']}")
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


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


_SUITE = ("test_rulefiles.py", "test_store.py", "test_paths.py", "test_settings.py",
          "test_engine_paths.py")


def real_suite(root: Path) -> str:
    """Workload 3: this checkout's `tests/policy` files `_SUITE`, with what they need,
    copied under `root` (the same files for every side of a comparison)."""
    here = Path(__file__).resolve().parent.parent
    suite = root / "real"
    (suite / "tests" / "policy").mkdir(parents=True)
    (suite / "home").mkdir()
    for name in ("pyproject.toml", "tests/__init__.py", "tests/conftest.py",
                 "tests/policy/__init__.py", *(f"tests/policy/{f}" for f in _SUITE)):
        (suite / name).write_bytes((here / name).read_bytes())
    files = " ".join(f"tests/policy/{f}" for f in _SUITE)
    return f"cd {suite} && HOME={suite / 'home'} {sys.executable} -m pytest -q {files}"


def compare(name: str, sides: dict[str, tuple[Worker, bool]], command: str, cwd: str,
            runs: int) -> None:
    """`sides`: label → (worker, observed); the first unobserved one is the baseline."""
    for label, (worker, observed) in sides.items():  # warm the caches, and count
        warm = worker.run(command, cwd, observed, count=observed)
        if observed:
            counts = sorted(warm["counts"].items(), key=lambda kv: -kv[1])
            print(f"{name}, {label}: {sum(warm['counts'].values())} notified calls ("
                  f"{', '.join(f'{n} {c}' for n, c in counts)}), read "
                  f"{warm['read_us']:.1f} us each (median)", flush=True)
    times: dict[str, list[float]] = {label: [] for label in sides}
    loads = [os.getloadavg()[0]]
    for i in range(runs):  # alternate the order: none always meets a cold cache
        labels = list(sides) if i % 2 else list(sides)[::-1]
        for label in labels:
            worker, observed = sides[label]
            times[label].append(float(worker.run(command, cwd, observed)["wall"]))
        loads.append(os.getloadavg()[0])
    off = next(label for label, (_, observed) in sides.items() if not observed)
    print(f"{name}: load {min(loads):.1f}-{max(loads):.1f}, {runs} rounds")
    for label, samples in times.items():
        line = f"  {label:>7}: median {statistics.median(samples):.3f} s"
        if label != off:
            ratios = [a / b for a, b in zip(samples, times[off], strict=True)]
            line += (f", ratio to {off} (median of pairs) {statistics.median(ratios):.3f},"
                     f" of the sums {sum(samples) / sum(times[off]):.3f}, extra "
                     f"{(statistics.median(samples) - statistics.median(times[off])) * 1000:.1f}"
                     f" ms  (pairs: {', '.join(f'{r:.2f}' for r in ratios)})")
        print(line, flush=True)
    if "before" in times and "after" in times:
        ratios = [a / b for a, b in zip(times["after"], times["before"], strict=True)]
        print(f"  after/before (median of pairs) {statistics.median(ratios):.3f}, of the "
              f"sums {sum(times['after']) / sum(times['before']):.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--backend", default=os.environ.get("SWIFTY_BACKEND", "bwrap"))
    parser.add_argument("--only", choices=("c", "pytest", "suite", "true"), default=None)
    parser.add_argument("--base", type=Path, default=None,
                        help="another checkout (with its own .venv): the 'before' side")
    args = parser.parse_args()
    os.environ["SWIFTY_BACKEND"] = args.backend
    here = Path(__file__).resolve().parent.parent
    this = Worker(sys.executable, here)
    workers = [this]
    sides: dict[str, tuple[Worker, bool]] = {}
    if args.base is not None:
        base = Worker(str(args.base / ".venv" / "bin" / "python"), args.base)
        workers.append(base)
        sides["before"] = (base, True)
        sides["after"] = (this, True)
    else:
        sides["on"] = (this, True)
    sides["off"] = (this, False)
    try:
        with tempfile.TemporaryDirectory(dir=Path.home()) as folder:
            root = Path(folder)
            (root / ".git").mkdir()
            if args.only in (None, "true"):
                compare("true (a run's fixed cost)", sides, "true", str(root),
                        args.runs * 4)
            if args.only in (None, "c"):
                build = c_project(root, args.files)
                compare(f"C build ({args.files} files)", sides, build, str(root),
                        args.runs)
            if args.only in (None, "pytest"):
                compare("pytest (400 tests in 40 files)", sides, test_suite(root),
                        str(root), args.runs)
            if args.only in (None, "suite"):
                compare(f"a real suite ({len(_SUITE)} files of tests/policy)", sides,
                        real_suite(root), str(root), args.runs)
    finally:
        for worker in workers:
            worker.close()


if __name__ == "__main__":
    main()
