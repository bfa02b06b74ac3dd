"""Toolchains confined: pip, npm and cargo install and build offline, writing only in
the project and the project's toolchain cache; home stays as it was, other projects'
caches are out of reach, credentials stay hidden."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy.paths import is_within, session_log_dir
from swifty_sandbox.sandbox import EXIT_SETUP
from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.spec import walkcache

Runner = Callable[..., RunResult]
REAL_HOME = Path(os.path.expanduser("~"))  # read at import, before a test moves HOME


def ok(result: RunResult) -> RunResult:
    assert result.exit_code == 0, result
    return result


def walk_cache(home: Path) -> str:
    return str(home / walkcache.WALK_HOME)


def listing(home: Path, skip: tuple[str, ...]) -> dict[str, tuple[int, int, int]]:
    """Every path under home with its mode, size and mtime, except below `skip`."""
    out = {}
    for top, dirs, files in os.walk(home):
        dirs[:] = [d for d in dirs if not any(is_within(os.path.join(top, d), s)
                                              for s in skip)]
        for name in (*dirs, *files):
            info = os.lstat(os.path.join(top, name))
            out[os.path.join(top, name)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    info = os.lstat(home)
    out[str(home)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return out


def caches_off(home: Path) -> None:
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  toolchainCaches: off\n")


class Confined:
    """Runs with home watched: nothing may change there but the project, its temp
    directory and its toolchain cache."""

    def __init__(self, confined: Runner, project: Path, home: Path) -> None:
        self.run, self.project, self.home = confined, project, home
        spec = Sandbox(project, home=home).spec()
        assert spec.toolchain_dir is not None and spec.temp_dir is not None
        self.cache = Path(spec.toolchain_dir)
        ok(confined("true"))  # swifty's own state (outside the sandbox) exists now
        # The walk cache is swifty's own, written on the host around each run (read-only
        # and hidden inside): it changes as the project does. So is the session log,
        # written on the host after each run (that a command cannot write it is
        # tests/escape/test_session_log.py's).
        self.skip = (str(project), str(self.cache), spec.temp_dir, walk_cache(home),
                     str(session_log_dir(home, os.environ)))
        self.before = listing(home, self.skip)

    def home_untouched(self) -> None:
        assert listing(self.home, self.skip) == self.before


@pytest.fixture
def watched(confined: Runner, project: Path, home: Path) -> Confined:
    return Confined(confined, project, home)


# -- pip -------------------------------------------------------------------------------

_BACKEND = '''
import base64, hashlib, os, zipfile

def _digest(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "tinypkg-0.1-py3-none-any.whl"
    info = "tinypkg-0.1.dist-info/"
    files = {
        "tinypkg/__init__.py": b"X = 42\\n",
        info + "METADATA": b"Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 0.1\\n",
        info + "WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\n"
                        b"Tag: py3-none-any\\n",
    }
    record = [f"{n},sha256={_digest(d)},{len(d)}" for n, d in files.items()]
    files[info + "RECORD"] = ("\\n".join([*record, info + "RECORD,,"]) + "\\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
    return name
'''


def _tar(path: Path, files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def test_pip_installs_an_sdist_into_a_project_venv(watched: Confined, project: Path) -> None:
    """An sdist (its build backend in the tree: no network for build requirements) is
    built and installed into the project's venv; pip caches the wheel it built in the
    project's toolchain cache, and home is untouched."""
    (project / "dist").mkdir()
    _tar(project / "dist" / "tinypkg-0.1.tar.gz", {
        "tinypkg-0.1/PKG-INFO": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
        "tinypkg-0.1/pyproject.toml": '[build-system]\nrequires = []\n'
                                      'build-backend = "backend"\nbackend-path = ["."]\n',
        "tinypkg-0.1/backend.py": _BACKEND,
    })
    python = sys.executable
    result = ok(watched.run(
        f"{python} -m venv --without-pip .venv && {python} -m pip --python .venv/bin/python"
        " install --no-index --disable-pip-version-check dist/tinypkg-0.1.tar.gz && "
        ".venv/bin/python -c 'import tinypkg; print(tinypkg.X)'"))
    assert result.stdout.strip().endswith("42"), result
    assert "not writable" not in result.stderr and "disabled" not in result.stderr, result
    assert list((watched.cache / "pip" / "wheels").rglob("tinypkg-0.1-*.whl"))
    watched.home_untouched()


# -- npm -------------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_installs_a_local_tarball(watched: Confined, project: Path, home: Path) -> None:
    """`npm install` of a packed package works confined and caches in the project's
    toolchain cache; with the caches off it fails (home is read-only), which proves
    the cache directory is what makes it work."""
    _tar(project / "tinypkg-1.0.0.tgz", {
        "package/package.json": json.dumps({"name": "tinypkg", "version": "1.0.0",
                                            "main": "index.js"}),
        "package/index.js": "module.exports = 'from-tarball'\n",
    })
    (project / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0"}))
    install = ("npm install --offline --no-audit --no-fund ./tinypkg-1.0.0.tgz && "
               "node -e 'console.log(require(\"tinypkg\"))'")
    assert ok(watched.run(install)).stdout.strip().endswith("from-tarball")
    assert (watched.cache / "npm" / "_cacache").is_dir()
    watched.home_untouched()

    shutil.rmtree(project / "node_modules")
    caches_off(home)
    failed = watched.run(install)
    assert failed.exit_code != 0 and not (project / "node_modules").exists(), failed


# -- cargo -----------------------------------------------------------------------------

def _cargo() -> str | None:
    found = shutil.which("cargo")
    if found is None and (REAL_HOME / ".cargo" / "bin" / "cargo").exists():
        found = str(REAL_HOME / ".cargo" / "bin" / "cargo")
    return found


@pytest.mark.skipif(_cargo() is None, reason="cargo is not installed for this user")
@pytest.mark.differs("erofs")
def test_cargo_builds_with_a_registry_dependency(watched: Confined, project: Path,
                                                 home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A dependency from a registry (a local one: no network) is unpacked into
    CARGO_HOME — the project's toolchain cache — and built; with the caches off the
    same build fails on the read-only home."""
    cargo = _cargo()
    assert cargo is not None
    if "RUSTUP_HOME" not in os.environ and (REAL_HOME / ".rustup").is_dir():
        monkeypatch.setenv("RUSTUP_HOME", str(REAL_HOME / ".rustup"))  # the test's HOME moved
    monkeypatch.setenv("PATH", f"{os.path.dirname(cargo)}:{os.environ.get('PATH', '')}")
    registry = project / "registry"
    (registry / "index" / "3" / "d").mkdir(parents=True)
    crate = _tar(registry / "dep-0.1.0.crate", {
        "dep-0.1.0/Cargo.toml": '[package]\nname = "dep"\nversion = "0.1.0"\n'
                                'edition = "2021"\n',
        "dep-0.1.0/src/lib.rs": "pub fn v() -> u32 { 9 }\n",
    })
    (registry / "index" / "3" / "d" / "dep").write_text(json.dumps({
        "name": "dep", "vers": "0.1.0", "deps": [], "features": {}, "yanked": False,
        "cksum": hashlib.sha256(crate).hexdigest()}) + "\n")
    app = project / "app"
    (app / "src").mkdir(parents=True)
    (app / ".cargo").mkdir()
    (app / "Cargo.toml").write_text('[package]\nname = "app"\nversion = "0.1.0"\n'
                                    'edition = "2021"\n[dependencies]\ndep = "0.1"\n')
    (app / "src" / "main.rs").write_text('fn main() { println!("{}", dep::v()); }\n')
    (app / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "local"\n'
        f'[source.local]\nlocal-registry = "{registry}"\n')
    result = ok(watched.run("cd app && cargo run -q --offline"))
    assert result.stdout.strip() == "9"
    assert list((watched.cache / "cargo" / "registry" / "src").glob("*/dep-0.1.0"))
    watched.home_untouched()

    shutil.rmtree(app / "target")
    caches_off(home)
    failed = watched.run("cd app && cargo build -q --offline")
    assert failed.exit_code != 0 and "Read-only file system" in failed.stderr, failed


# -- attacks ---------------------------------------------------------------------------

@pytest.mark.differs("hidden-names")
def test_other_projects_caches_are_unreachable(attack: Callable[..., RunResult],
                                              confined: Runner, project: Path,
                                              home: Path) -> None:
    """A shared cache would let one project plant code in the next one's build: each
    project has its own, and the others' are neither readable nor writable."""
    other = home / "code" / "other"
    (other / ".git").mkdir(parents=True)
    theirs = Path(Sandbox(other, home=home).spec().toolchain_dir or "")
    (theirs / "pip").mkdir(parents=True)
    (theirs / "pip" / "secret").write_text("their-private-wheel\n")
    planted = theirs / "cargo" / "registry" / "planted.rs"
    attack(f"mkdir -p {planted.parent} && echo pwned > {planted}", planted.exists,
           lambda: shutil.rmtree(theirs / "cargo"))
    assert "their-private-wheel" not in confined(f"cat {theirs}/pip/secret").stdout
    mine = Path(Sandbox(project, home=home).spec().toolchain_dir or "")
    listed = ok(confined(f"ls -a {mine.parent}")).stdout.split()
    assert theirs.name not in listed and mine.name in listed


def test_credentials_stay_hidden_with_caches_moved(unconfined: Runner, confined: Runner,
                                                   home: Path) -> None:
    """CARGO_HOME, the npm cache and GRADLE_USER_HOME point into the cache directory:
    the user's credential files are neither copied there nor readable at home."""
    secrets = {".cargo/credentials.toml": "[registry]\ntoken = \"cargo-SECRET\"\n",
               ".npmrc": "//registry.npmjs.org/:_authToken=npm-SECRET\n",
               ".m2/settings.xml": "<settings><password>mvn-SECRET</password></settings>",
               ".gradle/gradle.properties": "token=gradle-SECRET\n"}
    for name, text in secrets.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    show = ("cat ~/.cargo/credentials.toml ~/.npmrc ~/.m2/settings.xml "
            "~/.gradle/gradle.properties; ls -R \"$CARGO_HOME\" \"$GRADLE_USER_HOME\" "
            "\"$npm_config_cache\" 2>&1; cat \"$CARGO_HOME/credentials.toml\" 2>&1; true")
    assert unconfined(show).stdout.count("SECRET") == 4  # the control reads them
    result = confined(show)
    assert "SECRET" not in result.stdout + result.stderr, result


def test_a_link_at_the_cache_path_refuses_the_run(confined: Runner, project: Path,
                                                  home: Path, outside_temp: Path) -> None:
    """The cache directory is bound read-write only when it is a real directory of
    ours: a link there (it would carry the binding elsewhere) refuses the run."""
    cache = Path(Sandbox(project, home=home).spec().toolchain_dir or "")
    cache.parent.mkdir(parents=True, exist_ok=True)
    elsewhere = outside_temp / "elsewhere"
    elsewhere.mkdir()
    cache.symlink_to(elsewhere)
    result = Sandbox(project, home=home).run(["bash", "-c", "true"])
    assert result.exit_code == EXIT_SETUP and str(cache) in result.stderr, result
    assert list(elsewhere.iterdir()) == []


def test_without_a_cache_directory_the_command_runs_and_says_so(
        confined: Runner, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache directory that cannot be made (here a file where its parent goes) is no
    reason to refuse the command: it runs without caches, and stderr says why."""
    monkeypatch.delenv("CARGO_HOME", raising=False)
    parent = home / ".cache" / "swifty-sandbox" / "toolchains"
    parent.parent.mkdir(parents=True, exist_ok=True)
    parent.write_text("not a directory\n")
    result = ok(confined("echo \"cargo=${CARGO_HOME:-unset}\""))
    assert result.stdout.strip() == "cargo=unset", result
    assert "cannot create the project's toolchain cache" in result.stderr


def test_toolchain_config_planted_in_the_cache_is_moved_aside(confined: Runner,
                                                              project: Path,
                                                              home: Path) -> None:
    """A command can write cargo's config (`build.rustc-wrapper`) or a gradle init script
    into the project's cache, where the next build would run what it names, unseen by
    git and past `git clean`: after the run it is moved aside and named."""
    result = ok(confined(
        'mkdir -p "$GRADLE_USER_HOME/init.d" "$CARGO_HOME" && '
        'printf "[build]\\nrustc-wrapper = \\"/tmp/w.sh\\"\\n" > "$CARGO_HOME/config.toml" && '
        'echo "println 1" > "$GRADLE_USER_HOME/init.d/x.gradle" && '
        'cat "$CARGO_HOME/config.toml"'))
    assert "rustc-wrapper" in result.stdout  # the control: the command did write it
    cache = Path(Sandbox(project, home=home).spec().toolchain_dir or "")
    assert not (cache / "cargo" / "config.toml").exists()
    assert not (cache / "gradle" / "init.d").exists()
    assert list((cache / "cargo").glob(".swifty-blocked-*-config.toml"))
    assert str(cache / "cargo" / "config.toml") in result.stderr, result
    # Ordinary cache content stays.
    ok(confined('mkdir -p "$CARGO_HOME/registry" && echo x > "$CARGO_HOME/registry/kept"'))
    assert (cache / "cargo" / "registry" / "kept").exists()
