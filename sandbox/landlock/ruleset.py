"""`SandboxSpec → Landlock ruleset`: the rows the launcher hands to the kernel.

Landlock only adds: a rule grants rights on a directory and everything below it, the
rights of every rule on a path's ancestors add up, and nothing can take a right back
below. So "the whole file system readable but `~/.ssh`" cannot be two rules; it is
built *around* the hidden path: on each directory from the granted root down to the
hidden path, only the rights the hidden path may keep (listing), and the rest on each
of that directory's other entries, one rule each. A symlink entry gets no rule: what it
points to is ruled where it lies. The same construction keeps `/dev` to the devices a
command needs, and the host's `/tmp` out of sight (the command's temp dir is the
project's, through `TMPDIR`: without a mount namespace nothing can be put at `/tmp`).

Write rights are granted on whole writable roots. A protected path inside one
(`.git/hooks`, `.git/config`, `.swifty/`, agent settings) cannot be kept read-only in
a tree whose root creates and writes files: the root's own rule reaches it, and
building writes around it would take away creating and writing files at the root (and
in `.git`, where git writes its lock files). Those paths are *repaired after the run*
(snapshot, moved aside, content restored: `aftercare`); paths outside every writable
root (`~/.bashrc`) are *prevented*. Every row says which.

Pure but for looking at the file system (which entries a directory has, whether a path
is a directory), as `spec.compile_spec` does; the kernel is not asked: the ABI is given.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from swifty_sandbox.policy.paths import is_within

from ..spec.compiler import TEMP_MOUNTS, SandboxSpec
from . import abi as ll

# The devices a command uses (bwrap's `--dev` holds about these), with their rights;
# every other device (disks, `/dev/mem`, other terminals of the user) stays out.
_RW_DEVICE = ll.FS["read_file"] | ll.FS["write_file"] | ll.FS["truncate"] | \
    ll.FS["ioctl_dev"]
DEVICES: dict[str, int] = {
    "/dev/null": _RW_DEVICE, "/dev/zero": _RW_DEVICE, "/dev/full": _RW_DEVICE,
    "/dev/tty": _RW_DEVICE,
    "/dev/random": ll.FS["read_file"] | ll.FS["ioctl_dev"],
    "/dev/urandom": ll.FS["read_file"] | ll.FS["ioctl_dev"],
}
_EVERYTHING = (1 << 16) - 1
_ALL_BUT_LISTING = _EVERYTHING & ~ll.FS["read_dir"]

# Why a rule is there (the third column of `compile --target landlock`).
WHY_READ, WHY_WRITE, WHY_DEVICE, WHY_AROUND = "read", "write", "device", "around"


@dataclass(frozen=True, slots=True)
class Rule:
    path: str
    access: int
    why: str  # WHY_*: a granted root, a device, or an entry next to a hidden path


@dataclass(frozen=True, slots=True)
class Ruleset:
    abi: int
    handled_fs: int
    handled_net: int  # no port rule: every TCP bind and connect is refused
    scoped: int  # abstract unix sockets and signals of processes outside the sandbox
    rules: tuple[Rule, ...]
    hidden: tuple[str, ...]  # built around: not readable
    prevented: tuple[str, ...]  # protected paths no rule lets the command write
    repaired: tuple[str, ...]  # protected paths inside a writable root: after the run

    def as_json(self) -> dict[str, object]:
        return {
            "abi": self.abi,
            "handled_fs": ll.names(self.handled_fs),
            "handled_net": ll.names(self.handled_net, ll.NET),
            "scoped": ll.names(self.scoped, ll.SCOPE),
            "rules": [{"path": r.path, "access": ll.names(r.access), "why": r.why}
                      for r in self.rules],
            "hidden": list(self.hidden),
            "protected": [{"path": p, "held": "prevented"} for p in self.prevented]
            + [{"path": p, "held": "repaired after the run"} for p in self.repaired],
        }

    def text(self) -> str:
        lines = [f"# Landlock ABI {self.abi}",
                 f"# handled fs: {','.join(ll.names(self.handled_fs))}",
                 f"# handled net: {','.join(ll.names(self.handled_net, ll.NET)) or '-'}"
                 " (no port allowed)",
                 f"# scoped: {','.join(ll.names(self.scoped, ll.SCOPE)) or '-'}",
                 f"# {len(self.rules)} rules: path, rights, why"]
        lines += [f"{r.path}\t{','.join(ll.names(r.access))}\t{r.why}" for r in self.rules]
        lines += [f"# hidden (built around): {p}" for p in self.hidden]
        lines += [f"# protected, prevented: {p}" for p in self.prevented]
        lines += [f"# protected, repaired after the run: {p}" for p in self.repaired]
        return "\n".join(lines)


Entries = Callable[[str], Iterable[tuple[str, bool, bool]]]  # (path, is_dir, is_link)


def _scan(path: str) -> list[tuple[str, bool, bool]]:
    """A directory's entries; none when it cannot be listed (then nothing below it is
    granted: less, never more)."""
    try:
        with os.scandir(path) as it:
            out = []
            for e in it:
                try:
                    out.append((e.path, e.is_dir(follow_symlinks=False), e.is_symlink()))
                except OSError:
                    continue
            return sorted(out)
    except OSError:
        return []


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class _Builder:
    def __init__(self, holes: Mapping[str, int], entries: Entries) -> None:
        self.holes = holes
        self.entries = entries
        self.rules: dict[str, tuple[int, str]] = {}

    def add(self, path: str, access: int, why: str, *, directory: bool) -> None:
        if not directory:
            access &= ll.FILE_ONLY
        if not access:
            return
        old, old_why = self.rules.get(path, (0, why))
        self.rules[path] = (old | access, old_why if old else why)

    def grant(self, path: str, access: int, why: str, directory: bool | None = None
              ) -> None:
        """`access` on `path` and below, less what a hole below withholds."""
        is_dir = _is_dir(path) if directory is None else directory
        if path in self.holes:
            access &= ~self.holes[path]
        inner = [h for h in self.holes if h != path and self.holes[h] & access
                 and is_within(h, path)]
        if not inner or not is_dir:
            self.add(path, access, why, directory=is_dir)
            return
        withheld = 0
        for hole in inner:
            withheld |= self.holes[hole]
        self.add(path, access & ~withheld, why, directory=True)
        for entry, entry_is_dir, is_link in self.entries(path):
            if not is_link:  # a link's target is ruled where it lies
                self.grant(entry, access & withheld, WHY_AROUND, entry_is_dir)


def compile_ruleset(spec: SandboxSpec, abi: int, *, ttys: Sequence[str] = (),
                    entries: Entries = _scan) -> Ruleset:
    """The ruleset of `spec` at Landlock ABI `abi`. `ttys`: the terminals the command
    was given (its stdin, stdout, stderr), the only ones it may open by name."""
    handled_fs, handled_net, scoped = ll.handled(abi)
    writable = [*spec.writable, *(d for d in (spec.temp_dir, spec.toolchain_dir) if d)]
    holes: dict[str, int] = {}
    for path in (*spec.unreadable_dirs, *spec.unreadable_files):
        holes[path] = holes.get(path, 0) | ll.HIDDEN
    holes["/dev"] = _ALL_BUT_LISTING
    # Every project's caches and temp dirs: only this project's own are granted.
    for own in (spec.toolchain_dir, spec.temp_dir):
        if own:
            holes[os.path.dirname(own)] = holes.get(os.path.dirname(own), 0) | ll.HIDDEN
    if "/tmp" not in writable:  # `tmp: project` or `private`: the host's is not ours
        for path in TEMP_MOUNTS:
            real = os.path.realpath(path)
            if not any(is_within(w, real) for w in writable):
                holes[real] = _ALL_BUT_LISTING

    build = _Builder(holes, entries)
    roots = ["/"] if spec.read_roots is None else \
        list(dict.fromkeys(os.path.realpath(r) for r in spec.read_roots))
    # The project is always readable (also in plan mode, also where it lies in /tmp).
    for root in dict.fromkeys((*roots, spec.project)):
        build.grant(root, ll.READ & handled_fs, WHY_READ)
    for root in writable:
        build.grant(root, (ll.READ | ll.WRITE) & handled_fs, WHY_WRITE, directory=True)
    for device, access in (*DEVICES.items(), *((t, _RW_DEVICE) for t in ttys)):
        if os.path.exists(device):
            build.add(os.path.realpath(device), access & handled_fs, WHY_DEVICE,
                      directory=False)

    protected = list(dict.fromkeys((*spec.read_only, *spec.guard_dirs, *spec.guard_files)))
    repaired = tuple(p for p in protected if any(is_within(p, w) for w in writable))
    return Ruleset(
        abi=abi, handled_fs=handled_fs, handled_net=handled_net, scoped=scoped,
        rules=tuple(Rule(p, a, why) for p, (a, why) in build.rules.items()),
        hidden=tuple(holes), prevented=tuple(p for p in protected if p not in repaired),
        repaired=repaired)
