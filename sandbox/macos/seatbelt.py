"""`SandboxSpec → seatbelt profile (SBPL) + parameters`. Pure: it returns text and
values; `backend.py` runs `/usr/bin/sandbox-exec -p PROFILE -D NAME=value … -- CMD`.

**No path is ever part of the profile text.** Every path is a parameter (`-D NAME=value`,
used as `(param "NAME")` inside `subpath`/`literal`), so a project at `/x")(allow
default` is only a strange value. Globs need `regex`, which takes no parameter; their
regex is built from the pattern's text after its fixed directory, every literal
character escaped to a bracket expression (`[.]`) or, where even that is unsafe (`"`,
`\\`, `^`, `[`, control and non-ASCII characters), widened to `[^/]+`. Which directory it is
relative to is a parameter: `(require-all (subpath (param "ROOT_n")) (regex
#"^/[^/]+/[^/]+/…"))`, the `/[^/]+` repeated once per component of that directory,
so the regex is anchored exactly without naming it. Only ever more is matched, never
less; every rule it is used in is a deny.

Later rules win over earlier ones (as in Chrome's, Codex's and srt's profiles), so the
order below is: allow broadly, then deny read-only, unmovable and hidden paths, then
give back the project's own temp directory, which lives under the protected cache.
An empty filter list would make a rule unconditional: such rules are left out.

macOS resolves `/tmp`, `/var` and `/etc` to `/private/…` before matching, so every path
is canonicalised here.
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.rules import fixed_prefix, literal_path

from ..spec.compiler import SandboxSpec

SANDBOX_EXEC = "/usr/bin/sandbox-exec"  # absolute: never whatever `$PATH` offers
_PRIVATE = ("/tmp", "/var", "/etc")
# Read in addition to a strict profile's read roots: where macOS keeps what every
# program loads (the dyld cache and frameworks under /System, the developer tools).
MACOS_READ_ROOTS = ("/System", "/usr", "/bin", "/sbin", "/dev", "/Library/Apple",
                    "/Library/Developer/CommandLineTools", "/private/var/select",
                    "/private/var/db/timezone")
# Escaped as a bracket expression: printable ASCII that is neither a letter, a digit,
# `_`, `-`, `/` (literal as they are) nor unsafe inside a string or brackets.
_BRACKETED = frozenset(" !#$%&'()*+,.:;<=>?@`{|}~")
_PLAIN = frozenset(string.ascii_letters + string.digits + "_-")
_ANY = "[^/]+"  # one or more characters of one name: covers any single character
# The sysctls runtimes read at start (CPU count and type, page size, OS version, uptime,
# whether they run under Rosetta, a process's own entry): not the process table.
_SYSCTLS = ("hw.activecpu", "hw.byteorder", "hw.cachelinesize", "hw.cpufamily",
            "hw.cputype", "hw.l1dcachesize", "hw.l2cachesize", "hw.logicalcpu",
            "hw.logicalcpu_max", "hw.machine", "hw.memsize", "hw.model", "hw.ncpu",
            "hw.nperflevels", "hw.pagesize", "hw.physicalcpu", "hw.physicalcpu_max",
            "kern.argmax", "kern.hostname", "kern.maxfilesperproc", "kern.maxproc",
            "kern.osproductversion", "kern.osrelease", "kern.ostype", "kern.osversion",
            "kern.osvariant_status", "kern.secure_kernel", "kern.usrstack64",
            "kern.version", "kern.boottime", "machdep.cpu.brand_string",
            "sysctl.proc_cputype", "sysctl.proc_translated", "vm.loadavg")
_SYSCTL_PREFIXES = ("hw.optional.", "hw.perflevel", "kern.proc.pid.")


@dataclass(frozen=True, slots=True)
class Profile:
    text: str
    params: tuple[tuple[str, str], ...]  # (NAME, value), in the order first used


def canonical(path: str) -> str:
    """The path as the sandbox sees it: `/tmp/x` → `/private/tmp/x` (also /var, /etc)."""
    if path.startswith(_PRIVATE):  # the common case is none of them: one test
        for top in _PRIVATE:
            if path == top or path.startswith(top + "/"):
                return "/private" + path
    return path


class Params:
    """Parameter names for paths: `KIND_n`, one per distinct path of each kind."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self._names: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}

    def ref(self, kind: str, path: str) -> str:
        key = (kind, canonical(path))
        name = self._names.get(key)
        if name is None:
            count = self._counts.get(kind, 0)
            self._counts[kind] = count + 1
            name = self._names[key] = f"{kind}_{count}"
            self.values[name] = key[1]
        return f'(param "{name}")'


def _literal_re(char: str) -> str:
    if char in _PLAIN or char == "/":
        return char
    if char in _BRACKETED:
        return f"[{char}]"
    if char == "]":
        return "[]]"
    return _ANY  # `"`, `\`, `^`, `[` (nested-set syntax in some dialects), control and
    #              non-ASCII characters


def component_re(glob: str) -> str:
    """One path component of a gitignore glob as a regex (no `/` in `glob`)."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "\\" and i + 1 < len(glob):
            out.append(_literal_re(glob[i + 1]))
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and glob.find("]", i + 2) != -1:
            out.append("[^/]")  # a class is one character: any one (never less)
            i = glob.find("]", i + 2) + 1
            continue
        else:
            out.append(_literal_re(char))
        i += 1
    return "".join(out)


def _depth(path: str) -> int:
    return sum(1 for part in path.split("/") if part)


def pattern_filters(anchored: str, roots: Sequence[str], params: Params,
                    kind: str) -> list[str]:
    """SBPL filters matching what an anchored gitignore glob matches (and below)."""
    literal = literal_path(anchored)
    if literal is not None:
        return [f"(subpath {params.ref(kind, os.path.normpath(literal))})"]
    body = anchored.rstrip("/")
    if "/" not in body:  # a basename glob: at any depth below each root
        tail, bases = "(/[^/]+)*/" + component_re(body), list(roots)
    else:
        prefix = fixed_prefix(anchored)[0]
        rest = body.strip("/").split("/")[_depth(prefix):]
        tail = "".join("(/[^/]+)*" if p == "**" else "/" + component_re(p) for p in rest)
        bases = [prefix]
    out = []
    for base in bases:
        base = canonical(os.path.normpath(base))
        anchor = "/[^/]+" * _depth(base)
        out.append(f'(require-all (subpath {params.ref("ROOT", base)}) '
                   f'(regex #"^{anchor}{tail}(/|$)"))')
    return out


def _rule(action: str, operations: str, filters: Iterable[str], why: str) -> list[str]:
    """One rule with its reason; none at all without filters (it would match all)."""
    kept = list(filters)
    if not kept:
        return []
    return [f"; {why}", f"({action} {operations}", *(f"  {f}" for f in kept), ")"]


def _pattern_bases(patterns: Iterable[str]) -> list[str]:
    """The directories globs are fixed to: renaming one would carry matches away."""
    out: list[str] = []
    for anchored in patterns:
        literal = literal_path(anchored)
        if literal is not None:
            out.append(literal)
        elif "/" in anchored.rstrip("/"):
            out.append(os.path.normpath(fixed_prefix(anchored)[0]) + "/")
    return out


def unmovable(spec: SandboxSpec) -> list[str]:
    """Every directory above a read-only, guarded or hidden path (or a glob's fixed
    directory) that a command could rename, writable roots included: `mv .git x`
    would carry `.git/config` away from its rule."""
    roots = (*spec.writable, *((spec.temp_dir,) if spec.temp_dir else ()))
    targets = (*spec.read_only, *spec.guard_dirs, *spec.guard_files,
               *spec.unreadable_dirs, *spec.unreadable_files,
               *_pattern_bases(spec.hidden_patterns))
    out: dict[str, None] = {}
    for target in targets:
        parent = os.path.dirname(target.rstrip("/"))
        while parent != "/" and parent not in out and any(is_within(parent, r)
                                                          for r in roots):
            out[parent] = None  # and, from an earlier target, all above it
            parent = os.path.dirname(parent)
    return list(out)


# What every profile starts with: nothing of the spec's in it.
_PREAMBLE = (
    "(version 1)",
    "; Everything not allowed below is denied.",
    "(deny default)",
    "; The command may start programs; they run under this same profile.",
    "(allow process-exec process-fork)",
    "; Signals and process information: its own processes only, not the user's.",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "; Apple's tools read their defaults (CFPreferences) at start.",
    "(allow user-preference-read)",
    "; getpwuid() and group lookups (whoami, `~`, git's author name) go to opendirectoryd.",
    '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo")',
    '  (global-name "com.apple.system.opendirectoryd.membership"))',
    "; CPU counts and load (Node's os.cpus(), make -j) come from the host port.",
    "(allow mach-host*)",
    "; Facts runtimes read at start; not other processes' arguments or environment.",
    "(allow sysctl-read",
    *(f'  (sysctl-name "{name}")' for name in _SYSCTLS),
    *(f'  (sysctl-name-prefix "{prefix}")' for prefix in _SYSCTL_PREFIXES),
    ")",
    "; POSIX semaphores and shared memory (Python multiprocessing, compilers' jobs).",
    "(allow ipc-posix-sem)",
    "(allow ipc-posix-shm)",
    "; Terminals: ptys the command opens (script, expect, pty tests).",
    "(allow pseudo-tty)",
    '(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))',
    "(allow file-read* file-write* file-ioctl",
    '  (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))',
    "; Devices every shell uses: discarded output, its own terminal and descriptors.",
    "(allow file-write-data",
    '  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")',
    '  (regex #"^/dev/fd/[0-9]+$"))',
)


def seatbelt_profile(spec: SandboxSpec, *, proxy_port: int | None = None,
                     terminals: Sequence[str] = ()) -> Profile:
    """The profile for `spec`. `proxy_port`: the allowlist proxy's port on loopback,
    the one place the command may connect to (None: no network at all). `terminals`:
    the terminal devices it inherits (an interactive `run`), the only ones it may
    write to: not the user's other terminal windows (Linux shows it a /dev of its own).
    Later rules win: reads and writes allowed, then read-only, unmovable and hidden
    denied, then the command's own directories given back (parameters numbered in
    this order)."""
    p = Params()
    lines = list(_PREAMBLE)
    lines += _rule("allow", "file-write-data file-ioctl", (
        f"(literal {p.ref('TERMINAL', tty)})" for tty in terminals),
        "The terminal it was started from (output, window size), no other.")
    lines += _reads_and_writes(spec, p)
    lines += _read_only_and_unmovable(spec, p)
    lines += _hidden(spec, p)
    lines += _own_directories(spec, p)
    lines += ["; No network: no sockets to other hosts, nor to local services.",
              "(deny network*)"]
    if proxy_port is not None:
        lines += ["; The allowlist proxy on loopback, the one way out.",
                  f'(allow network-outbound (remote ip "localhost:{int(proxy_port)}"))']
    return Profile("\n".join(lines) + "\n", tuple(p.values.items()))


def _reads_and_writes(spec: SandboxSpec, p: Params) -> list[str]:
    if spec.read_roots is None:
        lines = ["; Reading is allowed everywhere except the hidden paths below.",
                 "(allow file-read*)"]
    else:
        lines = _rule("allow", "file-read*", (
            f"(subpath {p.ref('READ', r)})" for r in (*MACOS_READ_ROOTS, *spec.read_roots)),
            "Reading only in the read roots, the project and macOS's own system files.")
        lines += ["; Metadata anywhere: resolving a path (realpath, getcwd) stats its "
                  "ancestors.", "(allow file-read-metadata)"]
    return lines + _rule("allow", "file-write*", (
        f"(subpath {p.ref('WRITABLE', w)})" for w in spec.writable),
        "Writing only in the writable roots.")


def _read_only_and_unmovable(spec: SandboxSpec, p: Params) -> list[str]:
    # What is read-only is what Linux mounts read-only: existing paths, and guards where
    # one is missing. Not the write globs: a repository a command makes (`git init
    # sub`) must get its `.git/config` and hooks, and is checked after the run, as on
    # Linux. `file-link`: a hard link to a read-only file would be a second, unguarded
    # name for it (on Linux a link across its read-only mount fails, EXDEV).
    lines = _rule("deny", "file-write* file-link", dict.fromkeys(
        f"(subpath {p.ref('READ_ONLY', r)})"
        for r in (*spec.read_only, *spec.guard_dirs, *spec.guard_files)),
        "Read-only: protected paths and write-deny rules.")
    lines += _rule("allow", "file-write-create", (
        f"(require-all (literal {p.ref('READ_ONLY', g)}) (vnode-type DIRECTORY))"
        for g in spec.guard_dirs),
        "A missing protected directory may appear empty (`git init` makes .git/hooks), "
        "as on Linux; nothing can be put in it.")
    return lines + _rule("deny", "file-write-unlink", (
        f"(literal {p.ref('UNMOVABLE', d)})" for d in unmovable(spec)),
        "Not renamed or removed: directories above read-only and hidden paths.")


def _hidden(spec: SandboxSpec, p: Params) -> list[str]:
    temp_parent = os.path.dirname(spec.temp_dir) if spec.temp_dir else None
    lines = _rule("deny", "file-read* file-write* file-link file-clone", dict.fromkeys(
        f"(subpath {p.ref('HIDDEN', h)})"
        for h in (*spec.unreadable_dirs, *spec.unreadable_files) if h != temp_parent),
        "Hidden: unreadable, and not moved away to be read elsewhere.")
    # Read globs also hide what appears during the run (Linux hides what exists when
    # the command starts). Such a file may be created (`cp .env.example .env`), not
    # read, renamed, removed, linked or cloned.
    return lines + _rule("deny", "file-read* file-write-unlink file-link file-clone", (
        f for a in spec.hidden_patterns
        for f in pattern_filters(a, spec.pattern_roots, p, "HIDDEN")),
        "Hidden as well: whatever matches a hidden glob, also when made later.")


def _own_directories(spec: SandboxSpec, p: Params) -> list[str]:
    """The command's own directories under the protected cache: the project's temp
    directory and toolchain cache. Their siblings (other projects') stay hidden."""
    lines: list[str] = []
    for kind, own in (("TEMP", spec.temp_dir), ("TOOLCHAIN", spec.toolchain_dir)):
        if own is None:
            continue
        lines += _rule("deny", "file-read* file-write* file-link file-clone", [
            f"(require-all (subpath {p.ref('HIDDEN', os.path.dirname(own))}) "
            f"(require-not (subpath {p.ref(kind, own)})))"],
            "Hidden: the other projects' directories beside this one.")
        lines += _rule("allow", "file-read* file-write*", [
            f"(subpath {p.ref(kind, own)})"],
            "The project's own directory under the protected cache "
            + ("($TMPDIR)." if kind == "TEMP" else "(toolchain caches)."))
    return lines


def sandbox_exec_argv(profile: Profile, command: Sequence[str]) -> list[str]:
    argv = [SANDBOX_EXEC, "-p", profile.text]
    for name, value in profile.params:
        argv += ["-D", f"{name}={value}"]
    return [*argv, "--", *command]
