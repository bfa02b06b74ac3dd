"""What swifty-sandbox adds to one agent tool call (target ≤ +50 ms), as installed by
`init`: the hook answering the agent, then the rewritten command running confined,
against the agent running the plain command itself.

    python -m benchmarks.agent_overhead [--runs N] [--no-rules] [--installed]
        [--before CHECKOUT]… [--launcher NAME=PATH]… [--breakdown]

Per call: the hook as `init` installs it (`python3 -E SCRIPT hook claude-code || exit 2`,
through `/bin/sh -c` as Claude Code runs it; the same context as the rewritten run's, so
one warm server serves both) with Claude Code's JSON on stdin (warm: the
warm server of this context, as a person's hook runs after its first call; cold: with
`SWIFTY_DAEMON=off`), then `bash -c <rewritten command>`; the baseline is `bash -c
<command>`; the floor is bare `bwrap --ro-bind / / true` (what any confinement costs).
The cases run interleaved, so a load burst on this shared machine hits all; on a loaded
machine compare the ratios to plain and to bare bwrap, not the milliseconds.

`--installed` measures this checkout installed as `pip install` (or pipx, uv tool)
makes it rather than this venv's editable install, whose import hook costs every
Python start ~10-30 ms that no installed copy pays. `--before CHECKOUT` (repeatable)
installs another checkout the same way (editable: in a venv of its own beside this
one's dependencies; `--installed`: as above) and measures it in the same interleaved
rounds, each hook rewriting to its own install; `--launcher NAME=PATH` does the same
for an install made elsewhere (an old commit's venv). The last lines give each one's
added time as a ratio of the first one's (after / before).

`--breakdown` adds where one warm call goes, for each install: the interpreter's own
start (`python -c pass`, and `bash -c true` before the run), then each step of the
client timed inside it (importing it, connecting to the server and checking it, the
handshake, the header until the worker accepts, the worker's part until the exit
status), for the hook and for the rewritten run; then this checkout's worker side of
the run by stage, as a warm worker runs it (a forked child of a process that imported
everything and learned what the server learns): policy load, decision, spec compile,
backend compile, environment, bwrap running the command (with and without the
violation observer, interleaved: its share), the launch's close, the after-run check.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
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
from .run_overhead import fresh_bytecode, installed_script
from .startup import CLIENT, CLIENT_STAGES

COMMAND = "git status --short >/dev/null; ls"
WORKER_STAGES = ("policy load", "decision", "spec compile", "backend compile",
                 "environment", "bwrap + command", "launch close", "after-run")


def call_ms(argv: list[str], stdin: str, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, text=True, capture_output=True, check=False,
                          env=env, cwd=cwd)
    return (time.perf_counter() - start) * 1000, done.stdout


def interpreter(script: str) -> str:
    """The interpreter `script`'s first line names (the warm server of a context is
    that exact path's)."""
    with open(script, "rb") as f:
        return f.readline()[2:].decode().strip()


# The interpreter's options of the hook `init` installs (`cli/hook.runner`): the same as
# the rewritten run's, so that one warm server serves both.
HOOK_OPTIONS = ("-E",)


def hook_argv(script: str) -> list[str]:
    """The hook as `init` installs it for an install whose script is `script`
    (`cli/init.hook_command`), run through `/bin/sh -c` as Claude Code runs a hook."""
    words = [interpreter(script), *HOOK_OPTIONS, script]
    return ["/bin/sh", "-c", f"{shlex.join(words)} hook claude-code || exit 2"]


def timed_client(script: str, args: list[str], stdin: str, env: dict[str, str],
                 cwd: Path, out: Path, options: tuple[str, ...] = ()) -> dict[str, float]:
    """One warm call of `script`'s client with each step timed inside it (`CLIENT`):
    {} when it was not served. `options`: the interpreter's, as the call has them (the
    hook's rewrite runs `python3 -E SCRIPT run …`: another context, another server)."""
    subprocess.run([interpreter(script), *options, "-c", CLIENT, str(out), *args],
                   input=stdin, text=True, capture_output=True, check=False, env=env, cwd=cwd)
    try:
        return dict(json.loads(out.read_text()))
    except (OSError, ValueError):
        return {}


def worker_stages(project: Path, home: Path, runs: int) -> dict[str, float]:
    """Median ms per stage of the rewritten `run` as a warm worker runs it, in forked
    children of a process that imported everything and learned the rule files and
    patterns a first call reports (`cli/warm.py`), with and without the observer."""
    from swifty_sandbox.cli.warm import prepare, warm_up

    old_home, old_cwd = os.environ.get("HOME"), os.getcwd()
    os.environ["HOME"] = str(home)
    os.chdir(project)
    try:
        warm_up()
        prepare()
        _learn_first_call(project)
        samples: dict[str, list[float]] = {}
        for _, observed in itertools.product(range(runs), (True, False)):
            for name, value in _in_child(lambda o=observed: _one_run(project, o)).items():
                samples.setdefault(name if observed else f"{name} (no observer)",
                                   []).append(value)
    finally:
        os.chdir(old_cwd)
        if old_home is not None:
            os.environ["HOME"] = old_home
    return {name: statistics.median(values) for name, values in samples.items()}


def _in_child(work: object) -> dict[str, float]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        try:
            assert callable(work)
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return dict(json.loads(data)) if data else {}


def _learn_first_call(project: Path) -> None:
    """What a warm server holds after one call in `project`: the rule files parsed and
    the project's trusted patterns compiled, as its worker reports them."""
    def first() -> dict[str, float]:
        from swifty_sandbox import Sandbox
        from swifty_sandbox.policy.rulefiles import fresh_sources
        from swifty_sandbox.policy.rules import late_patterns

        Sandbox(project).spec(str(project))
        report.write_text(json.dumps({"rules": fresh_sources(),
                                      "patterns": late_patterns()}))
        return {}

    report = project.parent / "first-call.json"
    _in_child(first)
    from swifty_sandbox.policy.rulefiles import learn
    from swifty_sandbox.policy.rules import learn_patterns

    learned = json.loads(report.read_text())
    learn(learned["rules"])
    learn_patterns(learned["patterns"])
    report.unlink()


def _one_run(project: Path, observed: bool) -> dict[str, float]:
    from swifty_sandbox import Request, Sandbox
    from swifty_sandbox.sandbox.backend import Host, backend_for
    from swifty_sandbox.sandbox.linux import observe
    from swifty_sandbox.sandbox.run.executor import execute
    from swifty_sandbox.sandbox.run.launch import _after_run, environment, prepare

    if not observed:
        observe.attach = lambda *args, **kwargs: None  # this child only
    times: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name] = (now - clock) * 1000
        clock = now

    argv = ["/bin/bash", "-c", COMMAND]
    box = Sandbox(project)
    lap("policy load")
    box.resolve(Request.bash(COMMAND))
    lap("decision")
    spec = box.spec(str(project))
    lap("spec compile")
    host = Host(dict(os.environ), network=None, ask_host=None, terminals=())
    spec, _ = prepare(spec, "")
    launch = backend_for().compile(spec, argv, host)
    lap("backend compile")
    with launch:
        env = launch.environment(environment(launch.spec, host.environ))
        lap("environment")
        launch.start()
        done = execute(launch.argv, env=env, cwd=launch.cwd, timeout=None, capture=True,
                       output_bytes=1 << 20, stdin=subprocess.DEVNULL,
                       pass_fds=launch.pass_fds, status_fd=launch.status_fd,
                       preexec=launch.preexec, close_after_spawn=launch.release(),
                       own_tree=launch.own_tree)
        lap("bwrap + command")
    lap("launch close")
    _after_run(launch.spec)
    lap("after-run")
    assert done.exit_code == 0, done.stderr
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-rules", action="store_true",
                        help="without the 90 rules of three layers (what `init` leaves)")
    parser.add_argument("--installed", action="store_true",
                        help="this checkout (and --before) installed, not editable")
    parser.add_argument("--before", action="append", default=[], type=Path,
                        metavar="CHECKOUT", help="another checkout, installed alike")
    parser.add_argument("--launcher", action="append", default=[], metavar="NAME=PATH",
                        help="another install's swifty-sandbox, measured alongside")
    parser.add_argument("--breakdown", action="store_true",
                        help="where one warm call goes (client steps, worker stages)")
    args = parser.parse_args()
    base = Path.home() / ".cache" / "swifty-sandbox-bench"  # not under /tmp: a root there
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=base))
    try:
        launchers = {}
        if args.installed:
            fresh_bytecode()
            launchers["this"] = str(installed_script(tmp / "this"))
        else:
            launchers["this"] = str(Path(sys.executable).with_name("swifty-sandbox"))
        for index, checkout in enumerate(args.before):
            folder = tmp / f"before-{index}"
            folder.mkdir()
            label = "before" if len(args.before) == 1 else f"before {index + 1}"
            launchers[label] = str(installed_script(folder, checkout.resolve(),
                                                    editable=not args.installed))
        for given in args.launcher:
            label, _, path = given.partition("=")
            launchers[label] = path
        measure(tmp, launchers, args.runs, no_rules=args.no_rules,
                breakdown=args.breakdown)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(tmp: Path, launchers: dict[str, str], runs: int, *, no_rules: bool,
            breakdown: bool) -> None:
    project, home = make_project(tmp)
    if no_rules:
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
    times: dict[str, list[float]] = {"plain": [], "bwrap": [], "bash -c true": []}
    for label in launchers:
        times[f"{label} python -c pass"] = []
        for case in ("hook warm", "hook cold", "run warm", "run cold"):
            times[f"{label} {case}"] = []
    steps: dict[str, list[float]] = {}
    bwrap = shutil.which("bwrap") or "bwrap"
    out = tmp / "client-times.json"
    print(f"measuring as uid {os.getuid()}, {runs} interleaved rounds, load "
          f"{os.getloadavg()[0]:.1f}; {', '.join(f'{k}={v}' for k, v in launchers.items())}")
    for _ in range(runs + 1):  # the first round starts the warm servers
        times["plain"].append(call_ms(["bash", "-c", COMMAND], "", envs["cold"], project)[0])
        times["bwrap"].append(call_ms([bwrap, "--ro-bind", "/", "/", "true"], "",
                                      envs["cold"], project)[0])
        if breakdown:
            times["bash -c true"].append(call_ms(["bash", "-c", "true"], "", envs["cold"],
                                                 project)[0])
        for label, script in launchers.items():
            for kind, env in envs.items():
                ms, answer = call_ms(hook_argv(script), payload, env, project)
                rewritten = json.loads(answer)["hookSpecificOutput"]["updatedInput"][
                    "command"]
                times[f"{label} hook {kind}"].append(ms)
                times[f"{label} run {kind}"].append(
                    call_ms(["bash", "-c", rewritten], "", env, project)[0])
            if not breakdown:
                continue
            times[f"{label} python -c pass"].append(
                call_ms([interpreter(script), "-c", "pass"], "", envs["warm"], project)[0])
            words = shlex.split(rewritten)  # [python3, -E, SCRIPT, run, …] or [SCRIPT, run, …]
            at = next(i for i, word in enumerate(words) if word.endswith("swifty-sandbox"))
            options, run_args = tuple(words[1:at]), words[at + 1:]
            for what, call_args, stdin, opts in (
                    ("hook", ["hook", "claude-code"], payload, HOOK_OPTIONS),
                    ("run", run_args, "", options)):
                for name, value in timed_client(script, call_args, stdin, envs["warm"],
                                                project, out, opts).items():
                    steps.setdefault(f"{label} {what} {name}", []).append(value)
    median = {k: statistics.median(v[1:]) for k, v in times.items() if len(v) > 1}
    plain, floor = median["plain"], median["bwrap"]
    print(f"plain {plain:.1f} ms, bare bwrap {floor:.1f} ms")
    added: dict[str, dict[str, float]] = {}
    for label in launchers:
        for kind in ("warm", "cold"):
            hook, run = median[f"{label} hook {kind}"], median[f"{label} run {kind}"]
            added.setdefault(label, {})[kind] = hook + run - plain
            print(f"{label} {kind}: hook {hook:.1f} ms + confined run {run:.1f} ms - "
                  f"plain {plain:.1f} ms = +{hook + run - plain:.1f} ms per tool call "
                  f"({(hook + run - plain) / 50:.2f}x the +50 ms target; hook+run "
                  f"{(hook + run) / plain:.1f}x plain, {(hook + run) / floor:.1f}x "
                  "bare bwrap)")
    first = next(iter(launchers))
    for label in list(launchers)[1:]:
        print(f"{first} / {label}: " + ", ".join(
            f"{kind} +{added[first][kind]:.1f} / +{added[label][kind]:.1f} ms = "
            f"{added[first][kind] / added[label][kind]:.2f}x (hook "
            f"{median[f'{first} hook {kind}'] / median[f'{label} hook {kind}']:.2f}x, run "
            f"{median[f'{first} run {kind}'] / median[f'{label} run {kind}']:.2f}x)"
            for kind in ("warm", "cold")))
    if breakdown:
        print_breakdown(launchers, median, steps, project, home, runs)


def print_breakdown(launchers: dict[str, str], median: dict[str, float],
                    steps: dict[str, list[float]], project: Path, home: Path,
                    runs: int) -> None:
    step = {k: statistics.median(v) for k, v in steps.items()}
    labels = list(launchers)
    print("one warm call, step by step (median ms; " + " | ".join(labels) + "):")
    for what in ("hook", "run"):
        rows = [("interpreter start", [median[f"{label} python -c pass"]
                                       for label in labels])]
        if what == "run":
            rows.insert(0, ("bash -c (the agent's)", [median["bash -c true"]] * len(labels)))
        rows += [(name, [step.get(f"{label} {what} {name}", float("nan"))
                         for label in labels]) for name in CLIENT_STAGES]
        total = [median[f"{label} {what} warm"] for label in labels]
        accounted = [sum(values[i] for _, values in rows) for i in range(len(labels))]
        rows.append(("exit, the rest", [t - a for t, a in zip(total, accounted, strict=True)]))
        rows.append((f"= {what} (whole)", total))
        print(f"  {what}:")
        for name, values in rows:
            print(f"    {name:24} " + " | ".join(f"{v:6.1f}" for v in values))
    stages = worker_stages(project, home, max(5, runs // 2))
    print("  the run's worker side by stage (this checkout; a forked warm worker; "
          "median ms, with | without the observer):")
    for name in WORKER_STAGES:
        print(f"    {name:24} {stages[name]:6.1f} | {stages[f'{name} (no observer)']:6.1f}")
    with_obs = sum(stages[name] for name in WORKER_STAGES)
    without = sum(stages[f"{name} (no observer)"] for name in WORKER_STAGES)
    print(f"    {'sum':24} {with_obs:6.1f} | {without:6.1f}  (the observer: "
          f"{with_obs - without:+.1f} ms)")


if __name__ == "__main__":
    main()
