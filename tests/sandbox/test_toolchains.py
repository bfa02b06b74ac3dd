"""The toolchain cache table and where it goes: pure parts (environment, argv, settings)."""

from __future__ import annotations

from pathlib import Path

from swifty_sandbox import Sandbox
from swifty_sandbox.policy.profile import SeccompProfile
from swifty_sandbox.sandbox.linux.bwrap import bwrap_argv
from swifty_sandbox.sandbox.spec import toolchains
from swifty_sandbox.sandbox.spec.compiler import SandboxSpec

CACHE = "/h/.cache/swifty-sandbox/toolchains/app-0123"


def test_every_variable_points_into_the_cache(tmp_path: Path) -> None:
    env = toolchains.environment(CACHE, str(tmp_path), {"MAVEN_OPTS": "-Xmx1g"})
    assert {name for _, variables in toolchains.TOOLCHAINS for name, _ in variables} \
        == set(env)  # no RUSTUP_HOME: this home has no ~/.rustup
    for name, value in env.items():
        path = value.split("=", 1)[1] if name == "MAVEN_OPTS" else value
        assert path.startswith(CACHE + "/"), (name, value)
    assert env["MAVEN_OPTS"] == f"-Xmx1g -Dmaven.repo.local={CACHE}/maven/repository"
    assert env["GOMODCACHE"] == f"{CACHE}/go/pkg/mod" and env["GOPATH"] == f"{CACHE}/go"
    assert env["GOCACHE"] == f"{CACHE}/go/build"
    assert env["CARGO_HOME"] == f"{CACHE}/cargo"
    for tool in ("pip", "uv", "npm", "pnpm", "yarn", "cargo", "go", "maven", "gradle"):
        assert tool in dict(toolchains.TOOLCHAINS)


def test_rustup_home_is_named_when_the_user_has_one(tmp_path: Path) -> None:
    (tmp_path / ".rustup").mkdir()
    assert toolchains.environment(CACHE, str(tmp_path), {})["RUSTUP_HOME"] == \
        str(tmp_path / ".rustup")
    assert "RUSTUP_HOME" not in toolchains.environment(CACHE, str(tmp_path),
                                                       {"RUSTUP_HOME": "/opt/rustup"})


def test_spec_names_the_projects_cache(project: Path, home: Path) -> None:
    spec = Sandbox(project, home=home).spec()
    assert spec.toolchain_dir == toolchains.cache_dir_for(str(project), str(home))
    assert spec.toolchain_dir not in spec.writable  # never walked like a project


def test_caches_off_in_profile_or_settings(project: Path, home: Path) -> None:
    (home / "p.yaml").write_text("extends: default\ntoolchainCaches: off\n")
    (home / ".swifty").mkdir()
    config = home / ".swifty" / "config.yaml"
    config.write_text(f"sandbox:\n  profile: {home / 'p.yaml'}\n")
    spec = Sandbox(project, home=home).spec()
    assert spec.toolchain_dir is None
    config.write_text(f"sandbox:\n  profile: {home / 'p.yaml'}\n  toolchainCaches: project\n")
    assert Sandbox(project, home=home).spec().toolchain_dir is not None
    config.write_text("sandbox:\n  toolchainCaches: false\n")
    assert Sandbox(project, home=home).spec().toolchain_dir is None


def test_a_committed_config_may_only_turn_caches_off(project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  toolchainCaches: off\n")
    (project / ".swifty").mkdir()
    (project / ".swifty" / "config.yaml").write_text("sandbox:\n  toolchainCaches: project\n")
    box = Sandbox(project, home=home)
    assert box.spec().toolchain_dir is None
    assert any("toolchainCaches" in w for w in box.warnings)
    (home / ".swifty" / "config.yaml").unlink()
    (project / ".swifty" / "config.yaml").write_text("sandbox:\n  toolchainCaches: 'off'\n")
    assert Sandbox(project, home=home).spec().toolchain_dir is None


def test_cache_mount_comes_after_read_only_and_before_hidden() -> None:
    spec = SandboxSpec(
        project="/p", cwd="/p", read_roots=None, writable=("/p",), private_dirs=(),
        pinned=(), read_only=("/h/.cache/swifty-sandbox",), guard_dirs=(),
        unreadable_dirs=("/h/.ssh",), unreadable_files=(), env_drop=(), env_keep=(),
        seccomp=SeccompProfile((), (), True, (), ()), nested_namespaces=False,
        toolchain_dir=CACHE)
    argv = bwrap_argv(spec, ["true"], dir_fds={CACHE: 5})
    parent = "/h/.cache/swifty-sandbox/toolchains"
    i = argv.index("--perms")
    assert argv[i:i + 11] == ["--perms", "0555", "--tmpfs", parent, "--bind-fd", "5", CACHE,
                              "--remount-ro", parent, "--perms", "0000"]
    assert argv.index("/h/.cache/swifty-sandbox") < i  # a writable home's read-only pin
