"""`SandboxSpec → seatbelt profile` is pure: tested here without macOS.

Golden files: `tests/sandbox/golden/seatbelt-<profile>-<mode>.sb` (the profile text, then
its parameters as comments; paths of the test tree shown as `{BASE}`, root's home as
`{ROOT_HOME}`, each regex anchor as the parameter it is counted from). After an
intended change, regenerate them and review the diff:
    SWIFTY_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/sandbox/test_seatbelt.py
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.profile import builtin_profiles
from swifty_sandbox.policy.rules import PathPattern
from swifty_sandbox.sandbox import SandboxSpec, SetupError
from swifty_sandbox.sandbox.backend import TARGETS, backend_for, backend_named
from swifty_sandbox.sandbox.linux.bwrap import bwrap_argv
from swifty_sandbox.sandbox.macos.backend import MacosBackend
from swifty_sandbox.sandbox.macos.seatbelt import (
    SANDBOX_EXEC,
    Params,
    canonical,
    pattern_filters,
    sandbox_exec_argv,
    seatbelt_profile,
)
from swifty_sandbox.sandbox.run.launch import run_confined

from . import sbpl

GOLDEN = Path(__file__).parent / "golden"
PROFILES = [p for p in builtin_profiles() if p not in ("programs", "syscalls")]
MODES = ["default", "acceptEdits", "plan", "bypassPermissions"]
# The only rules without a filter; a write rule without one would allow every write.
UNCONDITIONAL = [["version", "1"], ["deny", "default"], ["allow", "process-exec",
                 "process-fork"], ["allow", "user-preference-read"], ["allow", "mach-host*"],
                 ["allow", "ipc-posix-sem"], ["allow", "ipc-posix-shm"],
                 ["allow", "pseudo-tty"], ["allow", "file-read*"],
                 ["allow", "file-read-metadata"], ["deny", "network*"]]
# A regex may hold only these: no quote, backslash, control or non-ASCII character.
SAFE_REGEX = re.compile(r"[A-Za-z0-9_/\-\[\]^*+.()|$ !#%&',:;<=>?@`{}~]*")


def layout(project: Path, home: Path, profile: str = "default") -> None:
    """A project and a home with something of each kind the profiles name."""
    (project / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".env").write_text("KEY=1\n")
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "main.py").write_text("print()\n")
    nested = project / "vendor" / "lib" / ".git"
    (nested / "hooks").mkdir(parents=True, exist_ok=True)
    (nested / "config").write_text("")
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    (home / ".netrc").write_text("machine x\n")
    (home / ".bashrc").write_text("# rc\n")
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(f"sandbox:\n  profile: {profile}\n")


def spec_for(project: Path, home: Path, profile: str = "default",
             mode: str = "default") -> SandboxSpec:
    layout(project, home, profile)
    return Sandbox(project, home=home, mode=mode).spec()


def params_of(profile_params: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return dict(profile_params)


# -- well formed --------------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("mode", MODES)
def test_every_profile_is_well_formed(project: Path, home: Path, profile: str,
                                      mode: str) -> None:
    spec = spec_for(project, home, profile, mode)
    result = seatbelt_profile(spec)
    tree = sbpl.read(result.text)
    assert tree[:2] == [["version", "1"], ["deny", "default"]]
    params = params_of(result.params)
    for form in tree:
        assert isinstance(form, list) and form[0] in ("version", "allow", "deny"), form
        if not any(isinstance(f, list) for f in form):  # applies to everything
            assert form in UNCONDITIONAL, form
    used = {name for name in sbpl.atoms(tree, "str") if name in params}
    assert used == set(params)  # every parameter is used, none is missing
    for regex in sbpl.atoms(tree, "re"):
        assert SAFE_REGEX.fullmatch(regex), regex
        re.compile(regex)
    for value in params.values():  # no path of the user's is ever in the text
        assert not is_within(value, str(home)) or value not in result.text


def test_empty_lists_leave_rules_out_rather_than_apply_them_to_everything(
        project: Path, home: Path) -> None:
    spec = dataclasses.replace(spec_for(project, home, mode="plan"), writable=(),
                               read_only=(), guard_dirs=(), guard_files=(),
                               unreadable_dirs=(), unreadable_files=(), temp_dir=None,
                               hidden_patterns=(), protected_patterns=())
    tree = sbpl.read(seatbelt_profile(spec).text)
    assert not sbpl.rules(tree, "allow", "file-write*")
    assert not sbpl.rules(tree, "deny", "file-write-unlink")
    assert ["deny", "network*"] in tree


# -- golden files -------------------------------------------------------------------

def _normalised(spec: SandboxSpec, base: str) -> str:
    """The profile and its parameters, with this machine's paths named."""
    root_home = canonical(pwd.getpwuid(0).pw_dir)
    result = seatbelt_profile(spec)
    params = params_of(result.params)

    def anchor(m: re.Match[str]) -> str:
        name, run = m.group(1), m.group(2)
        depth = sum(1 for part in params[name].split("/") if part)
        assert run == "/[^/]+" * depth, (name, params[name], run)  # counted exactly
        return m.group(0)[:len(m.group(0)) - len(run)] + "{" + name + "}"

    text = re.sub(r'\(subpath \(param "(ROOT_\d+)"\)\) \(regex #"\^((?:/\[\^/\]\+)*)',
                  anchor, result.text)

    def value(v: str) -> str:
        v = re.sub(r"-[0-9a-f]{16}$", "-{DIGEST}", v)  # the project's temp directory
        if is_within(v, base):
            return "{BASE}" + v[len(base):]
        if root_home != "/" and is_within(v, root_home):
            return "{ROOT_HOME}" + v[len(root_home):]
        return v

    return text + "".join(f";; {name}={value(v)!r}\n" for name, v in result.params)


def _base(home: Path) -> str:
    """The test tree (`outside_temp`, two levels above the test home), as macOS names it."""
    return canonical(os.path.realpath(home.parent.parent))


def _local(spec: SandboxSpec, base: str) -> SandboxSpec:
    """The spec without what this host happens to have outside the test tree (its
    /etc/shadow, ticket caches, read roots that exist here): those vary by machine."""
    def keep(paths: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p for p in paths if is_within(canonical(p), base))

    return dataclasses.replace(
        spec, read_only=keep(spec.read_only), unreadable_dirs=keep(spec.unreadable_dirs),
        unreadable_files=keep(spec.unreadable_files), writable=keep(spec.writable),
        read_roots=None if spec.read_roots is None else keep(spec.read_roots))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("mode", MODES)
def test_golden(project: Path, home: Path, outside_temp: Path, profile: str,
                mode: str) -> None:
    base = canonical(os.path.realpath(outside_temp))
    spec = _local(spec_for(project, home, profile, mode), base)
    got = _normalised(spec, base)
    path = GOLDEN / f"seatbelt-{profile}-{mode}.sb"
    if os.environ.get("SWIFTY_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got)
    assert got == path.read_text(), f"regenerate: SWIFTY_UPDATE_GOLDEN=1 ({path.name})"


# -- hostile paths ------------------------------------------------------------------

HOSTILE = ['q"uote', "close)paren", "open(paren", "semi;colon", "hash#mark",
           "new\nline", "back\\slash", "ünïcødé-日本", "pipe|bar", "meta.*+?[]{}^$",
           '") (allow default) ("', "tab\there", "#\"(allow file-write*)\""]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_project_at_a_hostile_path_cannot_add_or_change_a_form(
        home: Path, name: str) -> None:
    benign, hostile = home / "code" / "plain", home / "code" / name
    results = []
    for project in (benign, hostile):
        (project / ".git").mkdir(parents=True)
        # Without what this host has outside the test tree: another test's
        # /tmp/krb5cc_* may come and go between the two.
        spec = _local(spec_for(project, home), _base(home))
        results.append(seatbelt_profile(spec))
    plain, evil = results
    assert sbpl.read(evil.text) == sbpl.read(plain.text)
    assert evil.text == plain.text  # the path is only ever a parameter value
    assert canonical(str(hostile)) in params_of(evil.params).values()


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_rule_pattern_cannot_add_or_change_a_form(
        project: Path, home: Path, name: str) -> None:
    """Rule text from a committed `permissions.yaml` becomes regex text: escaped."""
    def profile_with(pattern: str) -> str:
        rules = project / ".swifty" / "permissions.yaml"
        rules.parent.mkdir(exist_ok=True)
        import yaml

        rules.write_text(yaml.safe_dump([{"rule": f"ReadFile({pattern})", "effect": "deny"},
                                         {"rule": f"WriteFile({pattern})",
                                          "effect": "deny"}]))
        return seatbelt_profile(_local(spec_for(project, home), _base(home))).text

    plain = sbpl.read(profile_with("docs/*-aaaaaaa.txt"))
    escaped = name.replace("[", "\\[")  # a literal `[`: an unmatched one is a load error
    evil = sbpl.read(profile_with(f"docs/*-{escaped}.txt"))
    assert sbpl.shape(evil) == sbpl.shape(plain)
    for regex in sbpl.atoms(evil, "re"):
        assert SAFE_REGEX.fullmatch(regex), regex


# -- what the regexes match ---------------------------------------------------------

NAMES = ["a", ".git", "hooks", "x.key", "new\nline", 'q"', "ü", "b(c"]


def _candidates(base: str) -> list[str]:
    return [base + "/" + "/".join(parts) for depth in range(1, 4)
            for parts in itertools.product(NAMES, repeat=depth)]


@pytest.mark.parametrize("glob", ["**/.git/hooks", "*/**/.git/hooks", "*.key", "a/*",
                                  "a/**", "a/**/x.key", "?/hooks", "[ab]/hooks",
                                  'q"/*', "ü/**/*.key", "b(c/**", "new\nline/*"])
@pytest.mark.parametrize("base", ["/r", "/private/var/x y", '/h/we"ird(dir)'])
def test_regex_covers_every_path_the_glob_matches(glob: str, base: str) -> None:
    """Never less than the glob (escaping may widen, never narrow); exact where the
    glob has only plain characters, `*`, `?` and `**`."""
    anchored = glob if "/" not in glob else f"{base}/{glob}"
    pattern = PathPattern(glob, anchored)
    params = Params()
    filters = [sbpl.read(f)[0] for f in pattern_filters(anchored, [base], params, "X")]
    exact = not any(c in glob for c in '["\nü(')
    exact = exact and not glob.endswith("/**")  # the directory itself too, as on Linux
    for path in _candidates(base):
        expected = pattern.matches(path)
        got = any(sbpl.matches(f, params.values, path) for f in filters)
        assert got or not expected, f"{glob!r} misses {path!r}"
        if exact:
            assert got == expected, f"{glob!r} on {path!r}"


# -- Linux and macOS restrict the same paths ----------------------------------------

def _linux_sets(spec: SandboxSpec) -> tuple[set[str], set[str], set[str]]:
    argv = bwrap_argv(spec, ["true"])
    binds, read_only, hidden = [], set(), set()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--bind":
            binds.append((argv[i + 1], argv[i + 2]))
        elif arg == "--ro-bind" and argv[i + 1] != "/" and argv[i + 2] not in (
                spec.read_roots or ()):
            read_only.add(argv[i + 2])
            if argv[i + 1] == "/dev/null":
                hidden.add(argv[i + 2])
        elif arg == "--perms" and argv[i + 2] == "--tmpfs":
            read_only.add(argv[i + 3])
            if argv[i + 1] == "0000":
                hidden.add(argv[i + 3])
        i += 1
    dests = [d for _, d in binds]
    writable = {s if s != d else d for s, d in binds
                if not any(d != o and is_within(d, o) for o in dests)}
    return writable, read_only, hidden


def _macos_sets(spec: SandboxSpec) -> tuple[set[str], set[str], set[str]]:
    result = seatbelt_profile(spec)
    tree, params = sbpl.read(result.text), params_of(result.params)

    def paths(filters: list[sbpl.Node]) -> set[str]:
        out = set()
        for f in filters:
            assert isinstance(f, list)
            if f[0] in ("subpath", "literal"):
                out.add(params[sbpl.atoms(f, "str")[-1]])
            elif f[0] == "require-all" and "require-not" in sbpl.shape(f).__str__():
                out.add(params[sbpl.atoms(f, "str")[0]])  # the other projects' temp dirs
        return out

    writable = {p for r in (*sbpl.rules(tree, "allow", "file-write*"),
                            *sbpl.rules(tree, "allow", "file-read* file-write*"))
                for p in paths(r)}
    hidden = {p for r in sbpl.rules(tree, "deny", "file-read* file-write* file-link "
                                    "file-clone") for p in paths(r)}
    read_only = hidden | {p for r in sbpl.rules(tree, "deny", "file-write* file-link")
                          for p in paths(r)}
    return writable, read_only, hidden


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("mode", ["default", "plan"])
def test_linux_and_macos_restrict_the_same_paths(project: Path, home: Path, profile: str,
                                                 mode: str) -> None:
    spec = spec_for(project, home, profile, mode)
    (project / "migrations").mkdir()
    linux = _linux_sets(spec)
    mac = _macos_sets(spec)
    roots = [canonical(w) for w in linux[0]]

    def existing_in_test_tree(paths: set[str], inside_roots: bool = False) -> set[str]:
        out = {canonical(p) for p in paths if os.path.lexists(p)
               and is_within(p, str(home))}
        return {p for p in out if not inside_roots or any(is_within(p, r) for r in roots)}

    assert {canonical(w) for w in linux[0]} == mac[0]
    assert existing_in_test_tree(linux[1], True) == existing_in_test_tree(mac[1], True)
    assert existing_in_test_tree(linux[2]) == existing_in_test_tree(mac[2])
    assert existing_in_test_tree(mac[2]) >= {str(home / ".ssh"), str(home / ".netrc")}


def test_canonical_names_private_paths() -> None:
    assert canonical("/tmp/x") == "/private/tmp/x"
    assert canonical("/var") == "/private/var"
    assert canonical("/etc/ssh") == "/private/etc/ssh"
    assert canonical("/variable/x") == "/variable/x"
    assert canonical("/private/tmp") == "/private/tmp"


# -- the run path, the dispatch and the CLI -----------------------------------------

def test_dispatch_chooses_by_platform() -> None:
    assert backend_for("linux").name == "linux"
    assert backend_for("darwin").name == "macos"
    with pytest.raises(SetupError, match="win32"):
        backend_for("win32")
    for target, name in TARGETS.items():
        assert target in backend_named(name).targets


def test_run_on_macos_calls_sandbox_exec(fp: object, project: Path, home: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_subprocess import FakeProcess

    from swifty_sandbox.sandbox.run import executor

    assert isinstance(fp, FakeProcess)
    # The fake process has pid 0: never let the tree cleanup signal our own group.
    monkeypatch.setattr(executor, "kill_tree", lambda pid: None)
    fp.register([SANDBOX_EXEC, fp.any()], returncode=3)
    spec = spec_for(project, home)
    result = run_confined(spec, ["make", "test"], capture=False, stdin=subprocess.DEVNULL,
                          environ={"PATH": "/usr/bin", "TMPDIR": "/var/folders/x/T/",
                                   "AWS_SECRET_ACCESS_KEY": "s"},
                          backend=backend_for("darwin"))
    assert result.exit_code == 3
    call = [str(a) for a in fp.calls[0]]
    # Output is not captured: the terminal it goes to (under `pytest -s`) is writable.
    terminals = list(dict.fromkeys(os.ttyname(fd) for fd in (1, 2) if os.isatty(fd)))
    profile = seatbelt_profile(spec, terminals=terminals)
    assert call == sandbox_exec_argv(profile, ["make", "test"])
    assert call[:3] == [SANDBOX_EXEC, "-p", profile.text]
    assert call[-3:] == ["--", "make", "test"]
    dashes = [call[i + 1] for i, a in enumerate(call[:-3]) if a == "-D"]
    assert dict(d.split("=", 1) for d in dashes) == params_of(profile.params)
    assert spec.temp_dir is not None and os.path.isdir(spec.temp_dir)  # made for it


def test_macos_environment(project: Path, home: Path) -> None:
    spec = spec_for(project, home)
    env = MacosBackend().environment(spec, {"PATH": "/usr/bin", "TMPDIR": "/var/x/",
                                            "GITHUB_TOKEN": "t"})
    assert env == {"PATH": "/usr/bin", "TMPDIR": spec.temp_dir}


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS has sandbox-exec")
def test_missing_sandbox_exec_fails_closed(project: Path, home: Path) -> None:
    with pytest.raises(SetupError, match="sandbox-exec"):
        run_confined(spec_for(project, home), ["true"], capture=True, stdin=None,
                     environ={}, backend=backend_for("darwin"))


def test_sandbox_exec_errors_are_setup_errors() -> None:
    from swifty_sandbox.sandbox.macos.backend import sandbox_exec_error
    from swifty_sandbox.sandbox.run.executor import Completed

    def done(code: int, err: bytes) -> Completed:
        return Completed(exit_code=code, stdout=b"", stderr=err, truncated=False,
                         timed_out=False, duration_ms=1, status=())

    assert sandbox_exec_error(done(65, b"sandbox-exec: syntax error")) is not None
    assert sandbox_exec_error(done(65, b"make: error")) is None
    assert sandbox_exec_error(done(1, b"sandbox-exec: x")) is None


def test_compile_seatbelt_prints_the_profile_alone(project: Path, home: Path) -> None:
    layout(project, home)
    result = CliRunner().invoke(main, ["compile", "--target", "seatbelt", "--project",
                                       str(project)])
    assert result.exit_code == 0, result.stderr
    tree = sbpl.read(result.stdout)
    assert tree[:2] == [["version", "1"], ["deny", "default"]]
    assert str(project) not in result.stdout
    assert f"WRITABLE_0={canonical(str(project))}" in result.stderr
    as_json = CliRunner().invoke(main, ["compile", "--target", "seatbelt", "--json",
                                        "--project", str(project)])
    import json

    data = json.loads(as_json.stdout)
    assert data["profile"] == result.stdout.rstrip("\n") + "\n"
    assert data["params"]["WRITABLE_0"] == canonical(str(project))
    assert data["argv"][:3] == [SANDBOX_EXEC, "-p", data["profile"]]


# -- attacks, judged by the profile's own rules (last match wins) -------------------

@pytest.mark.parametrize(("operation", "where", "vnode", "allowed"), [
    ("file-write-data", "project/src/main.py", "REGULAR-FILE", True),  # everyday
    ("file-write-create", "project/new.txt", "REGULAR-FILE", True),
    ("file-write-unlink", "project/src/main.py", "REGULAR-FILE", True),
    ("file-read-data", "project/src/main.py", "REGULAR-FILE", True),
    ("file-write-data", "temp/x", "REGULAR-FILE", True),  # its own TMPDIR
    ("file-write-data", "home/notes.txt", "REGULAR-FILE", False),  # outside the roots
    ("file-write-data", "/dev/ttys003", "CHARACTER-DEVICE", False),  # another terminal
    ("file-write-data", "/dev/null", "CHARACTER-DEVICE", True),
    ("file-write-data", "/private/tmp/x", "REGULAR-FILE", False),  # the shared /tmp
    ("file-write-data", "home/.bashrc", "REGULAR-FILE", False),
    ("file-write-data", "project/.git/config", "REGULAR-FILE", False),
    ("file-write-create", "project/.git/hooks/pre-commit", "REGULAR-FILE", False),
    ("file-link", "project/.git/config", "REGULAR-FILE", False),  # a second name for it
    ("file-write-unlink", "project/.git", "DIRECTORY", False),  # mv .git .git.old
    ("file-write-unlink", "project", "DIRECTORY", False),
    ("file-write-unlink", "project/.git/hooks", "DIRECTORY", False),
    ("file-write-data", "project/vendor/lib/.git/config", "REGULAR-FILE", False),
    ("file-write-unlink", "project/vendor/lib", "DIRECTORY", False),  # above it
    # a repository made during the run gets its files (checked after the run, as on
    # Linux): `git init sub` must work
    ("file-write-create", "project/sub/.git/hooks/pre-commit.sample", "REGULAR-FILE",
     True),
    ("file-write-data", "project/sub/.git/config", "REGULAR-FILE", True),
    # a missing protected directory: it may appear empty, nothing may go in it
    ("file-write-create", "project/.swifty", "DIRECTORY", True),
    ("file-write-create", "project/.swifty", "REGULAR-FILE", False),
    ("file-write-create", "project/.swifty/permissions.local.yaml", "REGULAR-FILE",
     False),
    # hidden: existing, missing, and created during the run
    ("file-read-data", "home/.ssh/id_ed25519", "REGULAR-FILE", False),
    ("file-read-data", "home/.aws/credentials", "REGULAR-FILE", False),
    ("file-read-data", "home/.netrc", "REGULAR-FILE", False),
    ("file-clone", "home/.netrc", "REGULAR-FILE", False),
    ("file-read-data", "home/.docker/ca.pem", "REGULAR-FILE", False),
    ("file-read-data", "home/.cache/swifty-sandbox/tmp/other-0123456789abcdef/x",
     "REGULAR-FILE", False),  # another project's temp files
])
def test_attacks_on_the_default_profile(project: Path, home: Path, operation: str,
                                        where: str, vnode: str, allowed: bool) -> None:
    spec = spec_for(project, home)
    assert spec.temp_dir is not None
    result = seatbelt_profile(spec)
    tree, params = sbpl.read(result.text), params_of(result.params)
    places = {"project": str(project), "home": str(home), "temp": spec.temp_dir}
    head, _, rest = where.partition("/")
    path = canonical(os.path.normpath(os.path.join(places[head], rest))
                     if head in places else where)
    assert sbpl.allowed(tree, params, operation, path, vnode) is allowed, (operation, path)


def test_a_secret_made_during_the_run_is_hidden_by_its_pattern(
        project: Path, home: Path) -> None:
    """Linux hides what exists when the command starts; seatbelt's regex also covers a
    file the command creates (a `ReadFile` deny rule with a glob)."""
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(**/*.secret)\n  effect: deny\n")
    spec = spec_for(project, home)
    result = seatbelt_profile(spec)
    tree, params = sbpl.read(result.text), params_of(result.params)
    new = canonical(str(project / "deep" / "er" / "made-later.secret"))
    assert not sbpl.allowed(tree, params, "file-read-data", new)
    assert not sbpl.allowed(tree, params, "file-write-unlink", new)  # `mv` it away
    assert sbpl.allowed(tree, params, "file-write-create", new)  # `cp x.example x.secret`
    assert sbpl.allowed(tree, params, "file-read-data",
                        canonical(str(project / "deep" / "made-later.txt")))


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS has sandbox-exec")
def test_macos_doctor_checks_without_sandbox_exec() -> None:
    checks = backend_for("darwin").probe(None)
    assert [c.name for c in checks] == ["user", "sandbox-exec", "self-protection", "caps"]
    assert not checks[1].ok and "sandbox-exec" in checks[1].fix


def test_private_tmp_on_macos_is_a_directory_per_command(
        fp: object, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_subprocess import FakeProcess

    from swifty_sandbox.sandbox.run import executor

    assert isinstance(fp, FakeProcess)
    monkeypatch.setattr(executor, "kill_tree", lambda pid: None)  # the fake's pid is 0
    fp.register([SANDBOX_EXEC, fp.any()], returncode=0)
    fp.register([SANDBOX_EXEC, fp.any()], returncode=0)
    spec = spec_for(project, home, "strict")
    assert spec.temp_dir is None and spec.private_dirs
    temps = []
    for _ in range(2):
        run_confined(spec, ["true"], capture=False, stdin=None, environ={},
                     backend=backend_for("darwin"))
        call = [str(a) for a in fp.calls[-1]]
        values = dict(call[i + 1].split("=", 1) for i, a in enumerate(call[:-2]) if a == "-D")
        temps.append(values["TEMP_0"])
        assert Path(values["TEMP_0"]).name.startswith("private-")
        assert not Path(values["TEMP_0"]).exists()  # removed after the command
    assert temps[0] != temps[1]  # a fresh one each time


def test_only_the_inherited_terminal_is_writable(project: Path, home: Path) -> None:
    result = seatbelt_profile(spec_for(project, home), terminals=["/dev/ttys001"])
    tree, params = sbpl.read(result.text), params_of(result.params)
    assert sbpl.allowed(tree, params, "file-write-data", "/dev/ttys001", "CHARACTER-DEVICE")
    assert sbpl.allowed(tree, params, "file-ioctl", "/dev/ttys001", "CHARACTER-DEVICE")
    assert not sbpl.allowed(tree, params, "file-write-data", "/dev/ttys002",
                            "CHARACTER-DEVICE")


def test_compile_for_a_given_command(project: Path, home: Path) -> None:
    import json

    layout(project, home)
    for target in ("seatbelt", "bwrap"):
        result = CliRunner().invoke(main, ["compile", "--target", target, "--json",
                                           "--project", str(project), "--", "make", "-j2"])
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["argv"][-3:] == ["--", "make", "-j2"]


def test_a_profile_too_large_to_start_fails_closed(project: Path, home: Path) -> None:
    """Every path is a parameter; past exec's limit on macOS the run refuses (never a
    profile with some paths left out)."""
    spec = spec_for(project, home)
    many = tuple(str(project / f"d{i:05}" / "x" / "secret.env") for i in range(12000))
    spec = dataclasses.replace(spec, unreadable_files=many)
    with pytest.raises(SetupError, match="more than macOS lets a command start with"):
        run_confined(spec, ["true"], capture=True, stdin=None, environ={},
                     backend=backend_for("darwin"))
