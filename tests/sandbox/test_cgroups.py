"""Finding this process's cgroups (pure parsing) and making one for a command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.linux import cgroups
from swifty_sandbox.sandbox.linux.caps import prepare
from swifty_sandbox.sandbox.spec.compiler import Limits

V1 = """12:pids:/user.slice/user-1000.slice
8:memory:/user.slice/user-1000.slice/session-2.scope
1:name=systemd:/user.slice/user-1000.slice/session-2.scope
0::/user.slice/user-1000.slice/session-2.scope
"""
V1_MOUNTS = """30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw
35 25 0:31 / /sys/fs/cgroup/pids rw,nosuid shared:15 - cgroup cgroup rw,pids
36 25 0:32 / /sys/fs/cgroup/memory rw,nosuid shared:16 - cgroup cgroup rw,memory
"""


def test_cgroup_v1_hierarchies_come_first() -> None:
    assert cgroups.own_cgroups(V1, V1_MOUNTS) == {
        "pids": (1, "/sys/fs/cgroup/pids/user.slice/user-1000.slice"),
        "memory": (1, "/sys/fs/cgroup/memory/user.slice/user-1000.slice/session-2.scope")}


def test_cgroup_v2() -> None:
    mounts = "29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
    own = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n"
    path = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"
    assert cgroups.own_cgroups(own, mounts) == {"pids": (2, path), "memory": (2, path)}


def test_a_container_mounts_its_own_subtree() -> None:
    """Without a cgroup namespace the mount's root is the container's cgroup; a path
    outside it (`/..`) is not ours to use. Escaped mount points are decoded."""
    mounts = ("40 30 0:26 /docker/abc /sys/fs/cgroup/my\\040cg ro - cgroup2 cgroup2 rw\n")
    assert cgroups.own_cgroups("0::/docker/abc/inner\n", mounts) == {
        "pids": (2, "/sys/fs/cgroup/my cg/inner"), "memory": (2, "/sys/fs/cgroup/my cg/inner")}
    assert cgroups.own_cgroups("0::/other\n", mounts) == {}
    assert cgroups.own_cgroups("garbage\n", "garbage - too short\n") == {}


@pytest.mark.skipif("pids" not in cgroups.places(), reason="no writable pids cgroup here")
def test_a_command_cgroup_is_made_and_removed() -> None:
    caps = prepare(Limits(processes=77, memory_bytes=300 << 20))
    assert caps.cgroup is not None and caps.outer[:2] == ["/bin/sh", "-c"]
    assert caps.outer[-1] == "--" and all(p.endswith("/cgroup.procs") for p in caps.outer[4:-1])
    assert caps.prefix[1:] == [f"--data={300 << 20}:{300 << 20}", "--"]  # pids: cgroup
    assert caps.preexec() is None  # no Python between fork and exec
    pids = next(d for d in caps.cgroup.dirs if os.path.exists(f"{d}/pids.max"))
    with open(f"{pids}/pids.max") as f:
        assert f.read().strip() == "77"
    assert caps.close() is False
    assert not any(os.path.exists(d) for d in caps.cgroup.dirs)


def test_no_caps_no_cgroup() -> None:
    caps = prepare(Limits())
    assert caps.cgroup is None and caps.preexec() is None and caps.prefix == []


@pytest.mark.skipif("pids" not in cgroups.places(), reason="no writable pids cgroup here")
def test_a_busy_cgroup_is_removed_after_the_answer_where_that_is_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`remove_later` (a warm worker): `close` leaves a cgroup whose process still runs
    to `remove_pending`, which removes it once the process is gone; an idle one goes at
    once."""
    import subprocess
    import time

    monkeypatch.setattr(cgroups, "_LATER", None)
    cgroups.remove_later()
    idle = prepare(Limits(processes=50)).cgroup
    busy = prepare(Limits(processes=50)).cgroup
    assert idle is not None and busy is not None
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        for directory in busy.dirs:
            with open(f"{directory}/cgroup.procs", "w") as f:
                f.write(str(sleeper.pid))
        idle.close()
        assert not any(os.path.exists(d) for d in idle.dirs)
        busy.close()  # its process still runs: left for later, still holding its caps
        assert all(os.path.exists(d) for d in busy.dirs)
        with open(next(f"{d}/pids.max" for d in busy.dirs
                       if os.path.exists(f"{d}/pids.max"))) as f:
            assert f.read().strip() == "50"
    finally:
        sleeper.kill()
        sleeper.wait()
    time.sleep(0.05)
    cgroups.remove_pending()
    assert not any(os.path.exists(d) for d in busy.dirs)
    assert cgroups._LATER == []


@pytest.mark.linux
@pytest.mark.parametrize("procs", [[], ["cgroup.procs", "x"]])
def test_the_join_writes_only_cgroup_procs(tmp_path: Path, procs: list[str]) -> None:
    """The join (`caps._JOIN`) given an argv without its `--` refuses (125) rather
    than write its pid into a file named by each word (seen: `bwrap`, `--ro-bind` and
    `true` made in a checkout by an argv built without it); with it, it runs the rest."""
    from swifty_sandbox.sandbox.linux import caps

    (tmp_path / "g").mkdir()
    target = tmp_path / "g" / "cgroup.procs"
    target.write_text("")
    lost = subprocess.run(["/bin/sh", "-c", caps._JOIN, "j", str(target), *procs,
                           "true"], cwd=tmp_path, check=False)
    assert lost.returncode == 125
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]
    kept = subprocess.run(["/bin/sh", "-c", caps._JOIN, "j", str(target), "--", "echo",
                           "ran"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert kept.returncode == 0 and kept.stdout == "ran\n" and target.read_text().strip()
