"""Start-up cost of one confined command, with where it goes (issue 22 item 3).

    python -m benchmarks.startup [--runs N] [--editable] [--no-codex] [--before CHECKOUT]

Two projects: one with no rule files, one with a typical rule file (`TYPICAL`, the
README's example plus the allow rules a project keeps). In each, interleaved in one run
(so a load burst on this shared machine hits every contender alike), the median wall
time of:

- bare bwrap: the same bwrap argv and seccomp filter the project's spec compiles to,
  without swifty-sandbox around it (the floor); and that floor taken apart: bwrap with
  its namespaces and only `/`, `/dev` and `/proc` (what creating the namespaces costs),
  and the floor with the launch's rlimits set inside as `run` sets them (`prlimit`);
- `swifty-sandbox run -- true`: a new process per command, as an agent's hook runs it
  (handed to the warm server of its context, `cli/warm.py`);
- the same with `SWIFTY_DAEMON=off`: the cold path (every import, policy, filter);
- one request to a running `swifty-sandbox serve` (what a long-lived agent pays);
- `codex sandbox -- true` (Codex CLI from `$SWIFTY_AGENTS_DIR` or /work/agents), if it
  runs here; else the issue's measured 81 ms.

Then bwrap's own part by part (namespaces, the spec's other mounts, prlimit), and the
stage breakdown of a served `run` in a new process: the interpreter's own
start, then each step of the client timed inside it (importing it, connecting to the
server and checking it, the handshake, the header until the worker accepts, the worker's
run until its exit status), and the exit; then the worker's part by stage, as a warm
worker does it (a forked child of a process that imported everything), timed in the
child, one sample per round like every contender (so a stage can be set against bare
bwrap under the same load): policy load, decision, spec compile, backend compile (argv,
filter), prepare + environment, bwrap itself (and what the launch adds over bare bwrap
with prlimit: the observer, the placeholders, the executor), after-run; and what the
CLI adds around them.
Targets: run ≤ 3x bare bwrap and ≤ 0.4x Codex; serve ≤ 1.3x bare bwrap.
Run it as an unprivileged user (root joins a cgroup per command, see linux/caps.py).
`--before CHECKOUT` (another commit's work tree) installs it the same way and measures
its `run`, cold `run` and `serve` in the same interleaved rounds, for before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.linux.bwrap import bwrap_argv
from swifty_sandbox.sandbox.linux.caps import prepare as caps_for
from swifty_sandbox.sandbox.linux.seccomp import export
from swifty_sandbox.sandbox.run.probe import find_bwrap

from . import timing
from .run_overhead import command, fresh_bytecode, installed_script, served

CODEX_MEASURED_MS = 81.1  # issue 22, when Codex cannot run here
TYPICAL = """\
- rule: Bash(git *)
  effect: allow
- rule: Bash(git push --force*)
  effect: deny
- rule: Bash(npm test*)
  effect: allow
- rule: Bash(npm run *)
  effect: allow
- rule: Bash(pytest*)
  effect: allow
- rule: Bash(make*)
  effect: allow
- rule: Bash(curl *)
  effect: ask
- rule: ReadFile(*.env*)
  effect: deny
- rule: ReadFile(*.env.example)
  effect: allow
- rule: ReadFile(secrets/**)
  effect: deny
- rule: EditFile(src/**/*.ts)
  effect: allow
- rule: EditFile(dist/**)
  effect: deny
"""
# A served `run -- true` in a new process, each step timed inside it (`client_stages`):
# the steps of `entry.main`, timed by wrapping the functions it calls.
CLIENT = r"""
import time
start = time.perf_counter()
import sys
from swifty_sandbox.cli import entry
laps = {"import entry": time.perf_counter()}
handshake, recv_exact = entry.handshake, entry.recv_exact
def timed_handshake(sock):
    proof = handshake(sock)
    laps["handshake"] = time.perf_counter()
    return proof
def timed_recv(sock, size):  # after the handshake: the 1-byte answer, then the status
    data = recv_exact(sock, size)
    if "handshake" in laps:
        laps["header -> accepted" if size == 1 else "accepted -> status"] = time.perf_counter()
    return data
entry.handshake, entry.recv_exact = timed_handshake, timed_recv
sock = entry._connect()
laps["connect + checks"] = time.perf_counter()
code = entry._call(sock, sys.argv[2:]) if sock is not None else None
times, last = {}, start
for name, at in laps.items():
    times[name], last = (at - last) * 1000, at
import json
with open(sys.argv[1], "w") as f:
    json.dump(times if code == 0 else {}, f)
"""
CLIENT_STAGES = ("import entry", "connect + checks", "handshake", "header -> accepted",
                 "accepted -> status")
# bwrap's options that each make one mount (or remount) in the new namespace; of them,
# those after which bwrap reads and parses the whole /proc/self/mountinfo to set the
# flags of what it mounted (bubblewrap #384): ~0.4 ms each here, a tmpfs ~0.03 ms.
REMOUNTING = frozenset({"--bind", "--ro-bind", "--dev-bind", "--bind-fd", "--ro-bind-fd",
                        "--remount-ro", "--bind-try", "--ro-bind-try", "--dev-bind-try"})
MOUNT_OPS = REMOUNTING | {"--tmpfs", "--dev", "--proc", "--mqueue"}
STAGES = ("policy load", "decision", "spec compile", "backend compile",
          "prepare + env", "bwrap (execute)", "after-run")


def codex_argv() -> list[str] | None:
    agents = Path(os.environ.get("SWIFTY_AGENTS_DIR", "/work/agents"))
    codex = agents / "node_modules" / ".bin" / "codex"
    if not os.access(codex, os.X_OK):
        print(f"codex: not installed at {codex}; using the issue's {CODEX_MEASURED_MS} ms")
        return None
    argv = [str(codex), "sandbox", "linux", "--", "true"]
    for candidate in (argv, [str(codex), "sandbox", "--", "true"]):
        probe = subprocess.run(candidate, capture_output=True, text=True, check=False,
                               stdin=subprocess.DEVNULL)
        if probe.returncode == 0:
            return candidate
    print(f"codex sandbox does not run here ({probe.stderr.strip()[:200]}); "
          f"using the issue's {CODEX_MEASURED_MS} ms")
    return None


def bwrap_parts(project: Path
                ) -> tuple[dict[str, Callable[[], None]], tuple[int, int]]:
    """The floor and its parts, each a bwrap process with the spec's seccomp filter (in a
    memfd, as `run` passes it): the floor (the argv the spec compiles to, every mount);
    bwrap with the floor's namespace options and only `/`, `/dev` and `/proc` mounted;
    the floor with the command started by `prlimit` and the launch's rlimits, as `run`
    starts it (linux/caps.py). And how many mount operations the floor's argv makes, and
    how many of them bwrap follows with a read of the whole mount table."""
    bwrap = find_bwrap()
    assert bwrap is not None, "no bwrap"
    box = Sandbox(project)
    spec = box.spec()
    bpf = export(spec.seccomp)
    prefix = caps_for(box.run_spec().limits, dry=True).prefix

    def floor(fd: int, command: tuple[str, ...] = ("true",)) -> list[str]:
        return bwrap_argv(spec, command, bwrap=bwrap.path, seccomp_fd=fd)

    def namespaces(fd: int) -> list[str]:
        argv = floor(fd)
        first = next(i for i, word in enumerate(argv) if word in MOUNT_OPS)
        return [*argv[:first], "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--seccomp", str(fd), "--", "true"]

    def runner(make: Callable[[int], list[str]]) -> Callable[[], None]:
        def run() -> None:
            fd = os.memfd_create("bench-seccomp", 0)
            os.write(fd, bpf)
            os.lseek(fd, 0, os.SEEK_SET)
            subprocess.run(make(fd), pass_fds=(fd,), check=True, stdin=subprocess.DEVNULL)
            os.close(fd)

        return run

    argv = bwrap_argv(spec, ["true"])
    mounts = (sum(word in MOUNT_OPS for word in argv), sum(word in REMOUNTING for word in argv))
    return {"bare bwrap (floor)": runner(floor),
            "bwrap, namespaces only": runner(namespaces),
            "bare bwrap + prlimit": runner(lambda fd: floor(fd, (*prefix, "true")))}, mounts


def make_projects(base: Path) -> dict[str, Path]:
    projects = {}
    for name, rules in (("no rules", None), ("typical rules", TYPICAL)):
        project = base / name.replace(" ", "-")
        (project / ".git").mkdir(parents=True)
        (project / "src").mkdir()
        (project / "src" / "main.ts").write_text("export {}\n")
        if rules is not None:
            (project / ".swifty").mkdir()
            (project / ".swifty" / "permissions.yaml").write_text(rules)
            (project / ".env").write_text("KEY=secret\n")
        projects[name] = project
    return projects


def timed_client(python: Path, project: Path, folder: Path
                 ) -> tuple[Callable[[], None], dict[str, list[float]]]:
    """A contender: a served `run -- true` in a new process (`CLIENT`), each step timed
    inside it from its first line (importing the client, connecting to the server and
    checking it, the handshake, the header until the worker accepts, the worker's run
    until its exit status); the samples it collects. `python` is the script's
    interpreter, so the same server serves it."""
    samples: dict[str, list[float]] = {name: [] for name in CLIENT_STAGES}
    out = folder / "client-times.json"

    def run() -> None:
        subprocess.run([str(python), "-c", CLIENT, str(out), "run", "--", "true"],
                       cwd=project, check=True, stdin=subprocess.DEVNULL)
        times = json.loads(out.read_text())
        for name in CLIENT_STAGES if times else ():  # none: not served, no sample
            samples[name].append(times[name])

    return run, samples


def staged(project: Path) -> tuple[Callable[[], None], dict[str, list[float]]]:
    """A contender: one `run -- true` by stage in a forked child of this process once it
    has imported everything (as the warm server's workers are), timed in the child; the
    samples it collects. In the interleaved rounds, so that a stage can be set against
    the other contenders (bare bwrap, the client's steps) measured under the same load."""
    from swifty_sandbox.cli.warm import prepare, warm_up

    warm_up()
    prepare()
    samples: dict[str, list[float]] = {name: [] for name in STAGES}

    def run() -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read)
            try:
                os.chdir(project)
                times = _one_run(project)
                os.write(write, json.dumps(times).encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        for name, value in json.loads(data).items():
            samples[name].append(value)

    return run, samples


def _one_run(project: Path) -> dict[str, float]:
    from swifty_sandbox import Request, Sandbox
    from swifty_sandbox.sandbox.backend import Host, backend_for
    from swifty_sandbox.sandbox.run.executor import execute
    from swifty_sandbox.sandbox.run.launch import _after_run, environment, prepare

    times: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name] = (now - clock) * 1000
        clock = now

    box = Sandbox(project)
    lap("policy load")
    box.resolve(Request.bash_argv(["true"]))
    lap("decision")
    spec = box.spec(str(project))
    lap("spec compile")
    host = Host(dict(os.environ), network=None, ask_host=None, terminals=())
    spec, _ = prepare(spec, "")
    launch = backend_for().compile(spec, ["true"], host)
    lap("backend compile")
    with launch:
        env = launch.environment(environment(launch.spec, host.environ))
        lap("prepare + env")
        launch.start()
        done = execute(launch.argv, env=env, cwd=launch.cwd, timeout=None, capture=True,
                       output_bytes=1 << 20, stdin=subprocess.DEVNULL,
                       pass_fds=launch.pass_fds, status_fd=launch.status_fd,
                       preexec=launch.preexec, close_after_spawn=launch.release(),
                       own_tree=launch.own_tree)
    lap("bwrap (execute)")
    _after_run(launch.spec)
    lap("after-run")
    assert done.exit_code == 0, done.stderr
    return times


def floor_parts(medians: dict[str, float], mounts: tuple[int, int]) -> None:
    """Where bare bwrap's time goes: its namespaces (with `/`, `/dev`, `/proc`), the
    rest of the spec's mounts, and what `run`'s prlimit adds inside."""
    floor, alone = medians["bare bwrap (floor)"], medians["bwrap, namespaces only"]
    total, remounting = mounts
    print(f"  bare bwrap by part (median ms, same rounds; {total} mount operations, "
          f"{remounting} of them binds or remounts, each followed by a parse of the mount "
          "table):")
    print(f"    {'namespaces, /, /dev, /proc':28} {alone:6.1f}")
    print(f"    {f'the other {total - 3} mounts':28} {floor - alone:6.1f}")
    print(f"    {'+ prlimit inside (run)':28} "
          f"{medians['bare bwrap + prlimit'] - floor:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-codex", action="store_true")
    parser.add_argument("--editable", action="store_true",
                        help="measure this venv's (editable) install instead of a regular one")
    parser.add_argument("--before", type=Path, help="a checkout to compare with")
    args = parser.parse_args()
    fresh_bytecode()
    folder = Path(tempfile.mkdtemp(prefix="swifty-bench-", dir=Path.home()))
    try:
        script = Path(sys.executable).with_name("swifty-sandbox") if args.editable \
            else installed_script(folder)
        python = script.with_name("python")
        before = None
        if args.before is not None:
            (folder / "before").mkdir()
            before = installed_script(folder / "before", args.before.resolve())
        codex = None if args.no_codex else codex_argv()
        print(f"measuring {script} as uid {os.getuid()}, {args.runs} interleaved runs")
        for label, project in make_projects(folder / "projects").items():
            measure(label, project, script, python, codex, args.runs, before)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(label: str, project: Path, script: Path, python: Path,
            codex: list[str] | None, runs: int, before: Path | None) -> None:
    serve_one, stop_serving = served(script, project)
    warm = command([str(script), "run", "--", "true"], project)
    old: dict[str, Callable[[], None]] = {}
    old_samples: dict[str, list[float]] = {}
    stops = [stop_serving]
    if before is not None:
        old_serve, old_stop = served(before, project)
        stops.append(old_stop)
        old = {"before: run": command([str(before), "run", "--", "true"], project),
               "before: run, no server": command(
                   [str(before), "run", "--", "true"], project,
                   {**os.environ, "SWIFTY_DAEMON": "off"}),
               "before: serve": old_serve}
        (project.parent / "before").mkdir(exist_ok=True)
        old["before: run, timed inside"], old_samples = timed_client(
            before.with_name("python"), project, project.parent / "before")
    for _ in range(3):  # the first call starts the warm server; wait until it serves
        warm()
        if old:
            old["before: run"]()
        time.sleep(1.0)
    timed, client_samples = timed_client(python, project, project.parent)
    parts, mounts = bwrap_parts(project)
    by_stage, stage_samples = staged(project)
    contenders: dict[str, Callable[[], None]] = {
        **parts,
        "run (new process)": warm,
        "run, no warm server": command([str(script), "run", "--", "true"], project,
                                       {**os.environ, "SWIFTY_DAEMON": "off"}),
        "serve (per command)": serve_one,
        "python -c pass": command([str(python), "-c", "pass"], project),
        "run, timed inside": timed,
        "run by stage": by_stage,
    }
    if codex is not None:
        contenders["codex sandbox"] = command(codex, project)
    contenders.update(old)
    try:
        medians = timing.medians(timing.interleaved_ms(contenders, runs))
    finally:
        for stop in stops:
            stop()
    floor = medians["bare bwrap (floor)"]
    codex_ms = medians.get("codex sandbox", CODEX_MEASURED_MS)
    print(f"\n== {label}: `true`, median of {runs} (ms), and its ratio to bare bwrap:")
    for name, median in medians.items():
        print(f"  {name:22} {median:7.1f} ms   {median / floor:5.2f}x bwrap")
    floor_parts(medians, mounts)
    client, was = (
        {name: statistics.median(values) if values else float("nan")
         for name, values in samples.items()} for samples in (client_samples, old_samples))
    stages = {name: statistics.median(values) for name, values in stage_samples.items()}
    print("  a served run in a new process, step by step (median ms, same rounds"
          f"{'; before' if was else ''}):")
    print(f"    {'interpreter start':20} {medians['python -c pass']:6.1f}  (python -c pass)")
    for name, value in client.items():
        print(f"    {name:20} {value:6.1f}" + (f"  {was[name]:6.1f}" if was else ""))
    rest = medians["run (new process)"] - medians["python -c pass"] - sum(client.values())
    print(f"    {'exit, the rest':20} {rest:6.1f}  (run minus the interpreter and the steps)")
    print("  the worker's part (accepted -> status), by stage (a forked warm worker, same"
          " rounds):")
    for name, value in stages.items():
        print(f"    {name:20} {value:6.1f}")
    launched = stages["bwrap (execute)"] - medians["bare bwrap + prlimit"]
    print(f"    {'  over bwrap+prlimit':20} {launched:6.1f}  (of bwrap (execute): the observer's "
          "filter, its answers to bwrap's own set-up calls, the placeholders, the executor)")
    outside = client["accepted -> status"] - sum(stages.values())
    print(f"    {'the CLI around them':20} {outside:6.1f}  (click, Sandbox, records, exit status;"
          " accepted -> status minus the stages)")
    run_ms, serve_ms = medians["run (new process)"], medians["serve (per command)"]
    for what, ratio, limit in (("run <= 3x bare bwrap", run_ms / floor, 3.0),
                               ("run <= 0.4x codex", run_ms / codex_ms, 0.4),
                               ("serve <= 1.3x bare bwrap", serve_ms / floor, 1.3)):
        print(f"  target {what}: {ratio:.2f}x, {'met' if ratio <= limit else 'NOT met'}")


if __name__ == "__main__":
    main()
