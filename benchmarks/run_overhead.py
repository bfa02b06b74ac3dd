"""Per-command cost of confinement, and sandbox set-up time on big trees.

    python -m benchmarks.run_overhead [--runs N] [--no-peers] [--sizes 1000,10000,100000]

1. `swifty-sandbox run -- true` as a whole process, median wall time, interleaved in
   one run with: the same without the warm server (`SWIFTY_DAEMON=off`: the cold
   path), one request to a running `swifty-sandbox serve` (what an agent pays
   per command), bare `bwrap` with the same flags and seccomp filter (the floor), and
   the two peers a user would pick instead, `codex sandbox` (npm @openai/codex) and
   `srt` (npm @anthropic-ai/sandbox-runtime; needs ripgrep and socat), installed into
   a temporary folder here. Reported as ratios: these machines are noisy. Standard
   input is /dev/null for everyone, as an agent's commands have it (with a terminal
   on stdin `run` does not use the warm server). The targets (issue 14): `run` at most
   0.6x `codex sandbox` and 5x bare bwrap.
2. Sandbox set-up (policy load + compile, glob expansion included) with a
   `ReadFile(*.env*)` deny rule on projects of 1k, 10k and 100k files.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from swifty_sandbox import Mode, Sandbox
from swifty_sandbox.sandbox.linux.bwrap import bwrap_argv
from swifty_sandbox.sandbox.linux.seccomp import export
from swifty_sandbox.sandbox.run.probe import find_bwrap
from swifty_sandbox.sandbox.spec.compiler import compile_spec

from .timing import interleaved_ms


def install_peers(folder: Path) -> dict[str, list[str]]:
    """npm-install the peers into `folder`; the ones that work, by name."""
    if shutil.which("npm") is None:
        print("peers: npm not found, skipped")
        return {}
    subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                    str(folder), "@openai/codex", "@anthropic-ai/sandbox-runtime"],
                   check=False, capture_output=True, timeout=600)
    bin_dir = folder / "node_modules" / ".bin"
    peers = {"codex sandbox": [str(bin_dir / "codex"), "sandbox", "--", "true"],
             "srt": [str(bin_dir / "srt"), "true"]}
    working = {}
    for name, argv in peers.items():
        probe = subprocess.run(argv, capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            working[name] = argv
        else:
            print(f"peer {name!r} does not run here: {probe.stderr.strip()[:200]}")
    return working


def bare_bwrap(project: Path) -> Callable[[], None]:
    bwrap = find_bwrap()
    assert bwrap is not None, "no bwrap"
    spec = Sandbox(project).spec()
    bpf = export(spec.seccomp)

    def run() -> None:
        fd = os.memfd_create("bench-seccomp", 0)
        os.write(fd, bpf)
        os.lseek(fd, 0, os.SEEK_SET)
        argv = bwrap_argv(spec, ["true"], bwrap=bwrap.path, seccomp_fd=fd)
        subprocess.run(argv, pass_fds=(fd,), check=True, stdin=subprocess.DEVNULL)
        os.close(fd)

    return run


def command(argv: list[str], cwd: Path, env: dict[str, str] | None = None
            ) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(argv, cwd=cwd, check=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    return run


def fresh_bytecode() -> None:
    """Byte-compile the package, as `pip install` does: with PYTHONDONTWRITEBYTECODE set
    (it is on these machines) an edited module would be recompiled on every start."""
    import compileall

    import swifty_sandbox

    package = Path(swifty_sandbox.__file__).resolve().parent.parent
    for folder in ("swifty_sandbox", "policy", "sandbox", "cli", "profiles"):
        compileall.compile_dir(str(package / folder), quiet=1)


def installed_script(folder: Path, root: Path | None = None, *, editable: bool = False
                     ) -> Path:
    """`swifty-sandbox` as `pip install` makes it (not editable: an editable install
    adds an import hook, ~10 ms, to every Python start-up) in a venv of its own that
    borrows this one's dependencies through a `.pth` line, byte-compiled; from `root`
    (a checkout), this one by default. `editable`: as a checkout's own `pip install -e .`
    makes it instead."""
    import site
    import sysconfig

    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(purelib, "borrowed-dependencies.pth").write_text(
        "\n".join(dict.fromkeys([ours, *site.getsitepackages()])) + "\n")
    root = root or Path(__file__).resolve().parent.parent
    how = ["--no-build-isolation", "-e"] if editable else []
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", *how, str(root)], check=True)
    return venv / "bin" / "swifty-sandbox"


def served(script: Path, project: Path) -> tuple[Callable[[], None], Callable[[], None]]:
    """One request to a long-lived `swifty-sandbox serve`, as an agent sends it (the
    first, which loads the policy and builds the filter, made here)."""
    import json

    proc = subprocess.Popen([str(script), "serve", "--project", str(project)], cwd=project,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def run() -> None:
        stdin.write(json.dumps({"id": 1, "tool": "Bash", "argv": ["true"]}) + "\n")
        stdin.flush()
        assert json.loads(stdout.readline())["exit_code"] == 0

    def stop() -> None:
        stdin.close()
        proc.wait()
        stdout.close()

    run()  # warm: policy loaded, filter built
    return run, stop


def per_command(project: Path, runs: int, peers: bool, editable: bool) -> None:
    fresh_bytecode()
    folder = Path(tempfile.mkdtemp(prefix="swifty-bench-"))
    script = Path(sys.executable).with_name("swifty-sandbox") if editable \
        else installed_script(folder)
    print(f"measuring {script}")
    serve_one, stop_serving = served(Path(sys.executable).with_name("swifty-sandbox"),
                                     project)
    ours = command([str(script), "run", "--", "true"], project)
    for _ in range(3):  # the first call starts the warm server; wait until it serves
        ours()
        time.sleep(1.0)
    contenders: dict[str, Callable[[], None]] = {
        "bare bwrap (floor)": bare_bwrap(project),
        "swifty-sandbox run": ours,
        "run, no warm server": command([str(script), "run", "--", "true"], project,
                                       {**os.environ, "SWIFTY_DAEMON": "off"}),
        "swifty-sandbox serve": serve_one,
    }
    with tempfile.TemporaryDirectory() as tmp:
        if peers:
            for name, argv in install_peers(Path(tmp)).items():
                contenders[name] = command(argv, project)
        times = interleaved_ms(contenders, runs)  # so drift hits everyone alike
    stop_serving()
    shutil.rmtree(folder, ignore_errors=True)
    run_ms = statistics.median(times["swifty-sandbox run"])
    print(f"\n`run -- true`, median of {runs} (ms), and swifty-sandbox's ratio to each:")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"  {name:22} {median:7.1f} ms   swifty/this = {run_ms / median:5.2f}x")
    targets = {"codex sandbox": 0.6, "bare bwrap (floor)": 5.0}
    for name, limit in targets.items():
        if name in times:
            ratio = run_ms / statistics.median(times[name])
            verdict = "met" if ratio <= limit else "NOT met"
            print(f"target: run <= {limit}x {name}: {ratio:.2f}x, {verdict}")


def make_tree(root: Path, files: int) -> None:
    """A project shaped like a real one: nested dirs, ~20 files each, a few .env."""
    for i in range(files):
        d = root / f"pkg{i // 2000}" / f"mod{(i // 100) % 20}" / f"sub{(i // 20) % 5}"
        if i % 20 == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / (".env.local" if i % 5000 == 0 else f"f{i}.py")).touch()


def setup_times(sizes: list[int]) -> None:
    print("\nsandbox set-up with ReadFile(*.env*) (load + compile), median of 5:")
    previous = None
    for size in sizes:
        with tempfile.TemporaryDirectory(dir=Path.home()) as tmp:
            project = Path(tmp) / "project"
            (project / ".swifty").mkdir(parents=True)
            (project / ".git").mkdir()
            (project / ".swifty" / "permissions.yaml").write_text(
                "- rule: ReadFile(*.env*)\n  effect: deny\n")
            make_tree(project, size)
            samples = []
            for _ in range(5):
                start = time.perf_counter()
                box = Sandbox(project)
                spec = compile_spec(box.policy, Mode.DEFAULT)
                samples.append((time.perf_counter() - start) * 1000)
            median = statistics.median(samples)
            growth = f"  ({median / previous:.1f}x the previous size)" if previous else ""
            print(f"  {size:>7} files: {median:7.1f} ms, {len(spec.unreadable_files)} "
                  f".env files hidden{growth}")
            previous = median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--editable", action="store_true",
                        help="measure this venv's (editable) install instead of a regular one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.home()) as tmp:
        project = Path(tmp)
        (project / ".git").mkdir()
        per_command(project, args.runs, not args.no_peers, args.editable)
    setup_times([int(s) for s in args.sizes.split(",")])


if __name__ == "__main__":
    main()
