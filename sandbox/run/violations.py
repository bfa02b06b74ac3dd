"""What the sandbox refused a command, named: each call the observer saw
(`linux/observe.py`, kernel-observed: what the command asked for, never what it
printed), judged against the spec it ran in — a read of a hidden path, a write to a
hidden, read-only or outside path, a connection while the network is closed — plus the
caps the kernel counted and the destinations the proxy refused. Pure but for `lexists`
and `realpath` on the host, which only ever *drop* a report (the call would not have
been refused: `mkdir -p` meeting a directory that exists), never name another path.

Bounded (`LIMIT` distinct) and de-duplicated by (kind, op, path or host). The policy's
rule and the fix are added above (`agents/api.py`), where the policy is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..spec.compiler import SandboxSpec

LIMIT = 64

Violation = dict[str, object]


@dataclass(frozen=True, slots=True)
class Seen:
    """One call the observer saw: `op` read | write | create-write | create | remove |
    connect; `path` absolute as the call named it (joined to its directory), or for
    connect `address` (family, host, port)."""

    op: str
    path: str = ""
    address: tuple[int, str, int] | None = None


class Areas:
    """The spec's mounts as places: for a path, the deepest mount that decides it
    (later mounts win on the same path: `bwrap.py`'s order)."""

    def __init__(self, spec: SandboxSpec) -> None:
        self.places: dict[str, str] = {}
        temps = spec.temp_mounts if spec.temp_dir is not None else ()
        for kind, paths in (
                ("writable", (*spec.writable, *spec.pinned, *temps, *spec.private_dirs,
                              "/dev/shm")),
                ("read-only", (*spec.read_only, *spec.guard_dirs, *spec.guard_files,
                               *spec.worktree_locks,
                               *((os.path.dirname(spec.toolchain_dir),)
                                 if spec.toolchain_dir else ()))),
                ("writable", (spec.toolchain_dir,) if spec.toolchain_dir else ()),
                ("hidden", (*spec.unreadable_dirs, *spec.unreadable_files))):
            for path in paths:
                self.places[path] = kind
        self.read_roots = spec.read_roots

    def where(self, path: str) -> tuple[str, str | None]:
        """(hidden | read-only | writable | outside, the mount that decides)."""
        here = path
        while True:
            kind = self.places.get(here)
            if kind is not None:
                return kind, here
            if here == "/":
                return "outside", None
            here = os.path.dirname(here)

    def visible(self, path: str) -> bool:
        """Whether `path` lies in what the command sees (strict: the read roots)."""
        return self.read_roots is None or any(
            path == r or path.startswith(r.rstrip("/") + "/") for r in self.read_roots)


_SKIPPED = ("/proc", "/sys", "/dev")
_SHOWN_OP = {"create-write": "write"}


def classify(areas: Areas, seen: Iterable[Seen], *, proxied: bool) -> list[Violation]:
    """The refusals among `seen`, in the order seen, de-duplicated and bounded."""
    out: dict[tuple[object, ...], Violation] = {}
    for one in seen:
        found = _network(one, proxied) if one.op == "connect" else _file(areas, one)
        if found is None:
            continue
        key = (found["kind"], found["op"], found.get("path"), found.get("host"))
        if key not in out and len(out) < LIMIT:
            out[key] = found
    return list(out.values())


def considered(areas: Areas, one: Seen) -> bool:
    """Whether `classify` could call `one` a refusal, from the mounts alone (what it
    drops first; the observer drops the rest as a run goes, `linux/observe.py`)."""
    if one.op == "connect":
        return True
    path = one.path
    if not path.startswith("/") or (not path.startswith("/dev/shm") and any(
            path == s or path.startswith(s + "/") for s in _SKIPPED)):
        return False
    kind = areas.where(path)[0]
    if one.op == "read":
        return kind == "hidden"
    return not (kind == "writable" or (kind == "outside" and not areas.visible(path)))


def _file(areas: Areas, one: Seen) -> Violation | None:
    if not considered(areas, one):
        return None
    path = one.path
    kind, place = areas.where(path)
    if one.op == "read":
        return {"kind": kind, "op": "read", "path": path, "place": place}
    exists = os.path.lexists(path)
    if (one.op == "create" and exists) or (one.op in ("remove", "write") and not exists
                                           and kind != "hidden"):
        return None  # EEXIST / ENOENT came first: not a refusal of ours
    if kind != "hidden" and areas.where(os.path.realpath(path))[0] == "writable":
        return None  # through a link into a writable place: it was allowed
    return {"kind": kind, "op": _SHOWN_OP.get(one.op, one.op), "path": path,
            "place": place}


def _network(one: Seen, proxied: bool) -> Violation | None:
    if one.address is None:
        return None
    import ipaddress  # only a run that connected somewhere (start-up time)

    _family, host, port = one.address
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        return None
    if port == 53:  # the resolver: which name is in the query, not in the call
        return {"kind": "network", "op": "resolve", "host": None}
    if loopback:
        return None  # a server of its own inside, or the proxy's forwarder
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return {"kind": "network", "op": "connect", "host": shown, "direct": proxied}


# A refused read as tools print it: `cat: PATH: Permission denied`, Python's
# `[Errno 13] Permission denied: 'PATH'`.
_DENIED = re.compile(rb"(?:^|[\s'\"`(])(?P<a>[~/][^\s:'\"`]*)['\"`]?: Permission denied"
                     rb"|Permission denied: '(?P<b>[^']+)'")


def from_output(areas: Areas, stderr: bytes, home: str, cwd: str) -> list[Violation]:
    """Hidden paths the command's own output says it could not read: what a process
    printed, not what the kernel saw, so each is labelled `"seen": "output"` and gets
    no fix (a command could print any path). Only paths hidden in this run."""
    out: list[Violation] = []
    for match in _DENIED.finditer(stderr[-(1 << 16):]):
        text = (match.group("a") or match.group("b")).decode(errors="surrogateescape")
        if text.startswith("~/"):
            text = os.path.join(home, text[2:])
        path = os.path.normpath(os.path.join(cwd, text))
        if areas.where(path)[0] == "hidden":
            out.append({"kind": "hidden", "op": "read", "path": path, "seen": "output"})
    return out


def from_proxy(events: Sequence[dict[str, object]] | None) -> list[Violation]:
    """The destinations the egress proxy refused, as violations."""
    out: list[Violation] = []
    for event in events or ():
        if event.get("allowed") is False:
            # "said": the proxy's own blocked line already names it on stderr
            out.append({"kind": "network", "op": "connect", "said": True, "seen": "proxy",
                        "host": f"{event.get('host')}:{event.get('port')}"})
    return out


def merged(*found: Sequence[Violation]) -> tuple[Violation, ...]:
    """The lists in order, each (kind, op, path or host) once (the first: a kernel
    observation before a printed claim), at most `LIMIT`."""
    out: dict[tuple[object, ...], Violation] = {}
    for one in (v for group in found for v in group):
        key = (one["kind"], one["op"], one.get("path"), one.get("host"))
        if key not in out and len(out) < LIMIT:
            out[key] = one
    return tuple(out.values())


# Under an rlimit the kernel keeps no count of refused forks: what the command printed
# ("Cannot fork") is the only sign, so it is labelled as such.
PRINTED_FORK_FAILURE: Violation = {"kind": "limit", "op": "processes", "seen": "output"}


def limits(memory_hit: bool, processes_hit: bool) -> list[Violation]:
    """The caps the kernel counted a refusal at (the cgroup's events)."""
    hit: list[Violation] = []
    if memory_hit:
        hit.append({"kind": "limit", "op": "memory"})
    if processes_hit:
        hit.append({"kind": "limit", "op": "processes"})
    return hit
