"""`SandboxSpec → OCI runtime bundle` (`config.json` + an empty `rootfs/`), for runc or
crun on this host. `oci_config` is pure; `write_bundle` lists `/` and writes the files.

The container is the bwrap sandbox in another runtime, with its mounts in the same
numbered order (see `linux/bwrap.py`; a later mount wins):
  1. Each entry of the host's `/` read-only (`rro`: sub-mounts too), except /proc, /dev
     and /sys, which are mounted fresh; a top-level symlink (`bin -> usr/bin`) is made
     in `rootfs/`. With `read:` roots (strict), only those roots.
  2. /proc of the new PID namespace, a fresh /dev, /sys read-only.
  3. to 7. The temp dirs, writable roots, pins, read-only paths and guards, then the
     hidden paths (an empty read-only tmpfs, or /dev/null; runc gives the tmpfs the
     hidden directory's own mode, not 0000, so its name can be listed, not its files).
Namespaces: user (the caller's uid and gid are the container's 0, the one mapping runc
accepts without root; also for root: root outside must not mean capabilities inside),
pid, ipc, uts, mount, cgroup and network (a new one, with only loopback). No
capabilities, `noNewPrivileges`, the syscall rows as `linux.seccomp`. No cgroup file
system is mounted (hybrid cgroup hosts cannot), and resources are set only for the caps
the spec names.

What runs after a command under `run` (the check of planted repositories and policy
files, `aftercare.py`) does not run under an OCI runtime: compile a bundle per run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..spec.compiler import SandboxSpec, ensure_temp_dir, scrub_env
from .seccomp import oci_seccomp

OCI_VERSION = "1.0.2"
# Mounted fresh (step 2), never bound from the host.
_SPECIAL = frozenset(("proc", "dev", "sys"))
# runc's own defaults for a container's /proc and /sys.
_MASKED = ("/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
           "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
           "/proc/scsi")
_READONLY = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger")
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# One entry of the host's `/`: its name and, for a symbolic link, the link's text.
TopLevel = tuple[str, str | None]


def _bind(source: str, dest: str, *options: str) -> dict[str, Any]:
    return {"destination": dest, "type": "bind", "source": source,
            "options": ["rbind", *options]}


def _tmpfs(dest: str, *options: str) -> dict[str, Any]:
    return {"destination": dest, "type": "tmpfs", "source": "tmpfs",
            "options": ["nosuid", "nodev", *options]}


def oci_mounts(spec: SandboxSpec, top_level: Sequence[TopLevel]) -> list[dict[str, Any]]:
    ro = ("rro", "nosuid", "nodev")
    mounts: list[dict[str, Any]] = []
    # 1.
    if spec.read_roots is None:
        mounts += [_bind(f"/{name}", f"/{name}", *ro) for name, link in top_level
                   if link is None and name not in _SPECIAL]
    else:
        mounts += [_bind(root, root, *ro) for root in spec.read_roots]
    # 2.
    mounts += [
        {"destination": "/proc", "type": "proc", "source": "proc",
         "options": ["nosuid", "noexec", "nodev"]},
        _tmpfs("/dev", "strictatime", "mode=755", "size=65536k"),
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
        _tmpfs("/dev/shm", "noexec", "mode=1777", "size=65536k"),
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
         "options": ["nosuid", "noexec", "nodev"]},
        _bind("/sys", "/sys", "rro", "nosuid", "noexec", "nodev"),
    ]
    # 3. and 4.
    if spec.temp_dir is not None:
        mounts += [_bind(spec.temp_dir, path, "rw", "nosuid", "nodev")
                   for path in spec.temp_mounts]
    mounts += [_tmpfs(path, "mode=1777") for path in spec.private_dirs]
    mounts += [_bind(path, path, "rw", "nosuid", "nodev") for path in spec.writable]
    # 5.
    mounts += [_bind(path, path, "rw", "nosuid", "nodev") for path in spec.pinned]
    # 6.
    mounts += [_bind(path, path, *ro) for path in spec.read_only]
    mounts += [_tmpfs(path, "ro", "mode=555") for path in spec.guard_dirs]
    mounts += [_bind("/dev/null", path, "ro") for path in spec.guard_files]
    # 7.
    mounts += [_tmpfs(path, "ro", "mode=000", "size=4k") for path in spec.unreadable_dirs]
    mounts += [_bind("/dev/null", path, "ro") for path in spec.unreadable_files]
    return mounts


def oci_config(spec: SandboxSpec, command: Sequence[str], *, environ: Mapping[str, str],
               uid: int, gid: int, top_level: Sequence[TopLevel]) -> dict[str, Any]:
    """The bundle's `config.json`, for `command` run as the host's `uid`:`gid` (the
    caller), which is uid 0 without capabilities in the container's user namespace."""
    env = scrub_env(dict(environ), spec)
    env.setdefault("PATH", _DEFAULT_PATH)
    linux: dict[str, Any] = {
        "namespaces": [{"type": kind} for kind in
                       ("user", "pid", "ipc", "uts", "mount", "cgroup", "network")],
        "uidMappings": [{"containerID": 0, "hostID": uid, "size": 1}],
        "gidMappings": [{"containerID": 0, "hostID": gid, "size": 1}],
        "seccomp": oci_seccomp(spec.seccomp),
        "maskedPaths": list(_MASKED),
        "readonlyPaths": list(_READONLY),
    }
    resources: dict[str, Any] = {}
    if spec.limits.processes is not None:
        resources["pids"] = {"limit": spec.limits.processes}
    if spec.limits.memory_bytes is not None:
        resources["memory"] = {"limit": spec.limits.memory_bytes}
    if resources:
        linux["resources"] = resources
    return {
        "ociVersion": OCI_VERSION,
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "swifty-sandbox",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": list(command),
            "env": [f"{name}={value}" for name, value in env.items()],
            "cwd": spec.cwd,
            "capabilities": {kind: [] for kind in
                             ("bounding", "effective", "inheritable", "permitted", "ambient")},
            "noNewPrivileges": True,
        },
        "mounts": oci_mounts(spec, top_level),
        "linux": linux,
    }


def host_top_level(root: str = "/") -> list[TopLevel]:
    entries: list[TopLevel] = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        entries.append((entry.name, os.readlink(entry.path) if entry.is_symlink() else None))
    return entries


def write_bundle(directory: Path, spec: SandboxSpec, command: Sequence[str]
                 ) -> dict[str, Any]:
    """Write `config.json` and `rootfs/` (empty but for the top-level symlinks) into
    `directory`, made if missing; returns the config."""
    top_level = host_top_level()
    config = oci_config(spec, command, environ=os.environ, uid=os.getuid(),
                        gid=os.getgid(), top_level=top_level)
    if spec.temp_dir is not None:
        ensure_temp_dir(spec.temp_dir)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # config.json holds the env
    rootfs = directory / "rootfs"
    rootfs.mkdir(exist_ok=True)
    for name, link in top_level:
        if link is not None and not os.path.lexists(rootfs / name):
            os.symlink(link, rootfs / name)
    (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n",
                                           encoding="utf-8")
    return config
