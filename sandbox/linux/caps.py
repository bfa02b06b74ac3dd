"""How one confined command's process and memory caps are enforced here.

- As root, a cgroup of its own when one can be made (`cgroups.py`): pids.max and the
  memory cap count the whole tree, threads included, and this command only. Joining it
  costs ~10-15 ms per command (the kernel waits for an RCU grace period on the move),
  so it is used only where nothing cheaper caps the process count.
- Otherwise (every other user) the process cap is RLIMIT_NPROC set *inside* the
  sandbox's user namespace,
  by `prlimit` run as the sandbox's first command: the kernel then counts the processes
  of that namespace only, not the user's others. The kernel never enforces
  RLIMIT_NPROC for root (uid 0, also inside a user namespace), so as root without a
  cgroup the process count cannot be capped: a cap the user asked for is then an error,
  the default one is left out (and `doctor` says so).
- The memory cap is also RLIMIT_DATA of every process (private writable memory:
  PROT_NONE reservations of V8, the JVM and Go do not count), so one process that
  outgrows it gets ENOMEM — a MemoryError, a message — rather than the OOM killer's
  SIGKILL. Without a cgroup that is the only memory cap: per process, not per tree.
No Python runs between fork and exec (a `preexec_fn` makes subprocess fork the whole
executor instead of vfork: +10 ms per command): the cgroup is joined by a fixed
`/bin/sh` line that then execs bwrap, the rlimits are set by `prlimit` inside. Only
without prlimit are they set between fork and exec.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from swifty_sandbox.messages import t

from ..spec.compiler import Limits
from . import cgroups

if TYPE_CHECKING:
    from . import cgroups

# prlimit from util-linux, from fixed system locations only (never $PATH).
_PRLIMIT = ("/usr/bin/prlimit", "/bin/prlimit")


class CapError(RuntimeError):
    """A cap the user asked for cannot be enforced on this machine."""


def prlimit_path() -> str | None:
    return next((p for p in _PRLIMIT if os.access(p, os.X_OK)), None)


# Joins the cgroups named before `--` (their cgroup.procs files), then runs the rest.
# Only a `cgroup.procs` is written: an argv that lost its `--` is refused (125), not
# taken word by word as files to write the pid into in the current directory.
_JOIN = ('for f; do [ "$f" = -- ] && break; case $f in */cgroup.procs) ;; *) exit 125;; '
         'esac; echo $$ > "$f" || exit 125; shift; done; shift; exec "$@"')


@dataclass(slots=True)
class Caps:
    cgroup: cgroups.Cgroup | None = None
    outer: list[str] = field(default_factory=list)  # run before bwrap, outside
    prefix: list[str] = field(default_factory=list)  # run inside, before the command
    rlimits: list[tuple[int, int]] = field(default_factory=list)  # between fork, exec

    def preexec(self) -> Callable[[], None] | None:
        """What the command's first process does between fork and exec (only where
        prlimit is missing)."""
        if not self.rlimits:
            return None
        rlimits = self.rlimits

        def apply() -> None:
            for which, value in rlimits:
                resource.setrlimit(which, (value, value))

        return apply

    def processes_capped(self) -> bool | None:
        """Whether a fork failed at the cap on processes; None when only an rlimit
        holds it (the kernel keeps no count of such failures). Before `close`."""
        hit = self.cgroup.pids_max_hit() if self.cgroup is not None else None
        if hit is not None:
            return hit
        by_rlimit = any(w.startswith("--nproc=") for w in self.prefix) or any(
            which == resource.RLIMIT_NPROC for which, _ in self.rlimits)
        return None if by_rlimit else False

    def close(self) -> bool:
        """Remove the cgroup; whether the memory cap killed a process."""
        if self.cgroup is None:
            return False
        killed = self.cgroup.oom_killed()
        self.cgroup.close()
        return killed


def prepare(limits: Limits, *, dry: bool = False) -> Caps:
    """The caps for one command; raises `CapError` for a required cap that cannot be
    enforced here. `dry`: described only, no cgroup made (`cgroups.plan`)."""
    processes, memory = limits.processes or None, limits.memory_bytes or None
    caps = Caps()
    if processes is None and memory is None:
        return caps
    held: frozenset[str] = frozenset()
    dirs: tuple[str, ...] = ()
    if os.geteuid() == 0:  # the kernel enforces no RLIMIT_NPROC for root: a cgroup

        if dry:
            dirs, held = cgroups.plan(processes, memory)
        else:
            caps.cgroup, held = cgroups.create(processes, memory)
            dirs = caps.cgroup.dirs if caps.cgroup is not None else ()
    rlimits = []
    if memory is not None:
        rlimits.append((resource.RLIMIT_DATA, "--data", memory))
    if processes is not None and "pids" not in held:
        if os.geteuid() == 0:
            if limits.processes_required:
                if caps.cgroup is not None:
                    caps.cgroup.close()
                raise CapError(t("setup.cap_unenforceable", processes=processes,
                                 why=t("limits.root_nproc")))
        else:  # inside the user namespace the kernel counts its processes only
            rlimits.append((resource.RLIMIT_NPROC, "--nproc", processes))
    prlimit = prlimit_path()
    if rlimits and prlimit is not None:
        caps.prefix = [prlimit, *(f"{flag}={n}:{n}" for _, flag, n in rlimits), "--"]
    else:  # set before bwrap: RLIMIT_NPROC then counts all of the user's processes
        caps.rlimits = [(which, n) for which, _, n in rlimits]
    if dirs:
        procs = [os.path.join(d, "cgroup.procs") for d in dirs]
        caps.outer = ["/bin/sh", "-c", _JOIN, "swifty-cgroup", *procs, "--"]
    return caps
