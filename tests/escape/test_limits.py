"""Resource caps by default: one command cannot start thousands of host processes or
take all memory. Judged from outside (processes counted on the host), each with a
control showing the uncapped behaviour where that is safe."""

from __future__ import annotations

import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from swifty_sandbox.policy.limits import default_max_memory, default_max_processes
from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.landlock.backend import _user_tasks
from swifty_sandbox.sandbox.linux import cgroups

# serial: the caps are judged by counting processes, and without a cgroup the process cap
# is RLIMIT_NPROC, which counts every process of the user (another test's come and go).
pytestmark = [pytest.mark.linux,  # namespaces, seccomp, cgroups, bwrap mounts
              pytest.mark.serial]

Runner = Callable[..., RunResult]
ATTEMPTS = 2000  # far above the default cap on small machines, bounded everywhere

# Forks `count` children, reports how many it made, then gives the host time to count
# them. Each child lives until the forker has ended (its end of the pipe closes) and
# then `hold` seconds more: alive together however slowly a loaded machine forks, and
# gone before that only if the run's end removed them. The marker in argv lets the
# host count them.
FORKER = textwrap.dedent("""
    import os, select, sys, time
    count, hold, marker = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    ended, alive = os.pipe()
    made = 0
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.close(alive)
            select.select([ended], [], [], 120)
            time.sleep(hold)
            os._exit(0)
        made += 1
    print("made", made, flush=True)
    time.sleep(3)  # the host counts now
""")


def _count(marker: str) -> int:
    """The forker's processes on the host (not bwrap's, whose argv holds the marker
    too)."""
    found = 0
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if marker in argv and argv[0] == sys.executable:
            found += 1
    return found


def _fork(run: Runner, script: Path, count: int, hold: float) -> tuple[RunResult, int, int]:
    """Run the forker; the most of its processes seen on the host at once, and how
    many are left once it returned."""
    marker = f"swifty-fork-{uuid.uuid4().hex[:10]}"
    peak = 0
    done = threading.Event()
    results: list[RunResult] = []

    def go() -> None:
        results.append(run([sys.executable, str(script), str(count), str(hold), marker],
                           timeout=60))
        done.set()

    thread = threading.Thread(target=go)
    thread.start()
    try:
        while not done.wait(0.2):
            peak = max(peak, _count(marker))
    finally:
        thread.join()
    time.sleep(0.3)
    left = _count(marker)
    for proc in psutil.process_iter(["cmdline"]):  # never leave any behind
        if marker in (proc.info["cmdline"] or []):
            proc.kill()
    return results[0], peak, left


@pytest.fixture
def forker(outside_temp: Path) -> Path:
    script = outside_temp / "forker.py"
    script.write_text(FORKER)
    return script


def test_fork_storm_is_capped_by_default(confined: Runner, unconfined: Runner,
                                         forker: Path) -> None:
    cap = default_max_processes()
    if cap + 50 > ATTEMPTS:
        pytest.skip(f"the default cap ({cap}) is above {ATTEMPTS} on this machine")
    # Control: more processes than the cap can exist on this machine (unconfined).
    before = _user_tasks()
    control, control_peak, control_left = _fork(unconfined, forker, cap + 50, 6)
    assert control.stdout.split() == ["made", str(cap + 50)], control
    assert control_peak > cap, control_peak
    # Without a user namespace (Landlock) RLIMIT_NPROC counts all of the user's tasks,
    # so the cap is set above what runs at launch: the control's killed children must
    # be gone (reaped, not zombies) first, or they raise it (a loaded CI saw 2000 made).
    deadline = time.monotonic() + 60
    while _user_tasks() > before + 20:
        assert time.monotonic() < deadline, "the control's processes were never reaped"
        time.sleep(0.2)
    # Confined: the storm stops at the cap; every one is gone when the command ends.
    result, peak, left = _fork(confined, forker, ATTEMPTS, 30)
    made = int(result.stdout.split()[1])
    print(f"processes reachable under the default cap {cap}: {made} (host peak {peak})")
    assert cap - 10 <= made < cap, result  # bwrap's own processes count too
    assert peak <= cap, peak
    assert left == 0 and control_left == 0


def test_a_lower_cap_from_the_user(confined: Runner, forker: Path) -> None:
    result, peak, left = _fork(lambda *a, **k: confined(*a, **k, processes=64),
                               forker, 500, 30)
    made = int(result.stdout.split()[1])
    assert 50 <= made < 64 and peak <= 64 and left == 0, (result, peak)


def test_hitting_the_cap_says_so_and_how_to_lift_it(confined: Runner) -> None:
    """A shell that cannot fork says only "Cannot fork": the run adds which cap was hit
    and how to raise it (from the cgroup's count, or the failure an rlimit leaves)."""
    storm = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait"
    result = confined(["sh", "-c", storm], processes=6)
    assert "cap of 6 processes" in result.stderr and "--max-processes" in result.stderr, \
        result
    control = confined(["sh", "-c", storm], processes=64)  # room for all of them
    assert control.exit_code == 0 and "cap of" not in control.stderr, control


def test_a_cap_too_low_for_the_sandbox_itself_says_so(project: Path, home: Path) -> None:
    """bwrap needs processes of its own: a cap that leaves none is named (exit 125),
    not taken for user namespaces being disabled."""
    from swifty_sandbox import Sandbox

    result = Sandbox(project, home=home).run(["true"], processes=1)
    if result.exit_code != 0:  # under prlimit (inside bwrap's namespace) it may fit
        assert result.exit_code == 125, result
        assert "cap of 1 processes" in result.stderr and "--max-processes" in result.stderr
        assert "User namespaces" not in result.stderr, result


@pytest.mark.skipif("memory" not in cgroups.places(),
                    reason="no cgroup for the memory controller here: the memory cap "
                           "is RLIMIT_DATA per process (test_memory_cap)")
def test_memory_of_many_processes_is_capped_together(confined: Runner,
                                                     unconfined: Runner) -> None:
    """Four processes of 160 MB each under a 256 MB cap: each alone is under the cap
    (the per-process rlimit lets it through, as the control shows), together they are
    not — the cgroup stops them."""
    code = textwrap.dedent("""
        import os, time
        for _ in range(4):
            if os.fork() == 0:
                block = bytearray(160 << 20)
                for i in range(0, len(block), 4096):
                    block[i] = 1  # touch every page
                print("GOT", flush=True)
                time.sleep(2)
                os._exit(0)
        for _ in range(4):
            os.wait()
    """)
    command = [sys.executable, "-c", code]
    control = unconfined(command, memory_bytes=256 << 20)
    assert control.stdout.count("GOT") == 4, control
    result = confined(command, memory_bytes=256 << 20)
    assert result.stdout.count("GOT") < 4, result
    assert "memory cap of 256M" in result.stderr, result


def test_default_caps_are_set_inside(confined: Runner) -> None:
    result = confined("ulimit -d")
    assert int(result.stdout) == default_max_memory() // 1024


@pytest.mark.parametrize("jobs", [16])
@pytest.mark.differs("shm")
def test_parallel_build_and_pool_under_the_default_caps(confined: Runner, project: Path,
                                                        jobs: int) -> None:
    """Everyday parallel work fits: `make -j` compiling C, a pool of workers with
    threads of their own."""
    for i in range(jobs):
        (project / f"u{i}.c").write_text(f"int f{i}(void) {{ return {i}; }}\n")
    (project / "main.c").write_text("int main(void) { return 0; }\n")
    objs = " ".join(f"u{i}.o" for i in range(jobs))
    (project / "Makefile").write_text(f"app: main.o {objs}\n\tcc -o app main.o {objs}\n")
    result = confined(f"make -j{jobs} >/dev/null && ./app && echo BUILT")
    assert result.stdout.strip() == "BUILT", result
    code = textwrap.dedent("""
        import multiprocessing as mp, threading
        def work(n):
            threads = [threading.Thread(target=sum, args=([n],)) for _ in range(8)]
            for t in threads: t.start()
            for t in threads: t.join()
            return n
        if __name__ == "__main__":
            with mp.get_context("fork").Pool(16) as pool:
                print(sum(pool.map(work, range(200))))
    """)
    assert confined([sys.executable, "-c", code]).stdout.strip() == str(sum(range(200)))


def test_unlimited_lifts_the_caps(confined: Runner, forker: Path) -> None:
    assert confined("ulimit -d", memory_bytes=0).stdout.strip() == "unlimited"
    cap = default_max_processes()
    result, _, left = _fork(lambda *a, **k: confined(*a, **k, processes=0), forker,
                            cap + 50, 30)
    assert result.stdout.split() == ["made", str(cap + 50)], result
    assert left == 0
