"""Toolchains with their registry preset, end to end: `pip install` into a project venv
(@pypi), `npm install` of a small package (@npm), `cargo build` with one crates.io
dependency (@crates). Each works confined through the proxy and leaves nothing in home
outside the project's toolchain cache. Skipped only when the registry cannot be reached
from this machine (checked from outside first)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy.paths import session_log_dir
from swifty_sandbox.sandbox import EXIT_SETUP
from swifty_sandbox.sandbox.agents import RunResult

from ..listener import reachable
from .test_toolchains import REAL_HOME, _cargo, listing, walk_cache


def _run_with(preset: str, project: Path, home: Path, command: str) -> RunResult:
    """`command` confined with `preset` allowed; home must be as it was, but for the
    project, its temp directory and its toolchain cache."""
    box = Sandbox(project, home=home, allow_net=(preset,))
    spec = box.spec()
    assert spec.toolchain_dir is not None and spec.temp_dir is not None
    assert box.run(["true"]).exit_code == 0  # swifty's own state exists now
    # and the session log, swifty's own record written on the host after each run
    skip = (str(project), spec.toolchain_dir, spec.temp_dir, walk_cache(home),
            str(session_log_dir(home, os.environ)))
    before = listing(home, skip)
    result = box.run(["bash", "-c", command], timeout=600)
    assert result.exit_code != EXIT_SETUP, result
    assert result.exit_code == 0, result
    assert listing(home, skip) == before, "home changed outside the toolchain cache"
    assert result.network and all(e["allowed"] for e in result.network), result.network
    return result


@pytest.mark.differs("allowlist")
def test_pip_install_into_a_project_venv(project: Path, home: Path) -> None:
    if not reachable("pypi.org"):
        pytest.skip("pypi.org is not reachable from this machine")
    python = sys.executable
    result = _run_with("@pypi", project, home,
                       f"{python} -m venv .venv && .venv/bin/python -m pip install "
                       "--isolated --no-deps --disable-pip-version-check six && "
                       ".venv/bin/python -c 'import six; print(six.__name__)'")
    assert result.stdout.strip().endswith("six"), result
    assert list((project / ".venv").rglob("six.py"))


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
@pytest.mark.differs("allowlist")
def test_npm_install_of_a_small_package(project: Path, home: Path) -> None:
    if not reachable("registry.npmjs.org"):
        pytest.skip("registry.npmjs.org is not reachable from this machine")
    (project / "package.json").write_text('{"name": "app", "version": "1.0.0"}\n')
    result = _run_with("@npm", project, home,
                       "npm install --no-audit --no-fund is-number@7.0.0 && "
                       "node -e 'console.log(require(\"is-number\")(5))'")
    assert result.stdout.strip().endswith("true"), result


@pytest.mark.skipif(_cargo() is None, reason="cargo is not installed for this user")
def test_cargo_build_with_one_dependency(project: Path, home: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    if not reachable("index.crates.io"):
        pytest.skip("crates.io is not reachable from this machine")
    cargo = _cargo()
    assert cargo is not None
    if "RUSTUP_HOME" not in os.environ and (REAL_HOME / ".rustup").is_dir():
        monkeypatch.setenv("RUSTUP_HOME", str(REAL_HOME / ".rustup"))  # HOME moved
    monkeypatch.setenv("PATH", f"{os.path.dirname(cargo)}:{os.environ.get('PATH', '')}")
    (project / "src").mkdir()
    (project / "Cargo.toml").write_text('[package]\nname = "app"\nversion = "0.1.0"\n'
                                        'edition = "2021"\n[dependencies]\n'
                                        'itoa = "=1.0.11"\n')
    (project / "src" / "main.rs").write_text(
        'fn main() { println!("{}", itoa::Buffer::new().format(42)); }\n')
    result = _run_with("@crates", project, home, "cargo run -q")
    assert result.stdout.strip() == "42", result
