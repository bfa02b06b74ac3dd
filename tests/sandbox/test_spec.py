"""The policy compiler on real trees: which paths end up writable, read-only, hidden."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from swifty_sandbox import Mode, Sandbox
from swifty_sandbox.sandbox.spec.compiler import Limits, compile_spec, scrub_env
from tests.deep import near_path_max


def under(paths: tuple[str, ...], folder: Path) -> tuple[str, ...]:
    """The paths below a test's own folder (the profile also hides system files)."""
    return tuple(p for p in paths if p.startswith(f"{folder}/"))


def rules(project: Path, text: str) -> None:
    (project / ".swifty").mkdir(exist_ok=True)
    (project / ".swifty" / "permissions.yaml").write_text(text)


def test_default_spec(project: Path, home: Path) -> None:
    (project / ".git" / "hooks").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    (home / ".ssh").mkdir()
    (home / ".netrc").write_text("machine x\n")
    temp = home / ".cache" / "swifty-sandbox" / "tmp"
    temp.mkdir(parents=True)  # made by the first run; other projects' dirs are hidden
    spec = Sandbox(project, home=home).spec()
    assert spec.writable == (str(project),)  # the host's /tmp is not writable
    assert spec.temp_dir is not None and Path(spec.temp_dir).parent == temp
    assert spec.temp_mounts == ("/tmp", "/var/tmp")
    assert set(spec.read_only) == {str(project / ".git" / "hooks"),
                                   str(project / ".git" / "config")}
    assert spec.pinned == (str(project / ".git"),)
    assert spec.guard_dirs == (str(project / ".swifty"),)  # missing: guarded empty
    # Missing files git would trust: whatever a command creates there is moved aside.
    assert set(spec.watch) == {str(project / ".git" / "config.worktree"),
                               str(project / ".git" / "commondir"),
                               *(str(project / n) for n in (
                                   ".claude/settings.json", ".claude/settings.local.json",
                                   ".mcp.json", ".claude/skills", ".claude/agents",
                                   ".claude/commands", ".claude/hooks", ".claude/launch.json",
                                   ".claude/workflows", ".claude/routines",
                                   ".claude/scheduled_tasks.json", ".claude/loop.md",
                                   ".claude/output-styles", ".codex/config.toml",
                                   ".codex/hooks.json",
                                   ".gemini/settings.json", ".cursor/hooks.json",
                                   ".cursor/mcp.json", ".vscode",
                                   # the agents' folders that are theirs whole
                                   ".codex", ".gemini",
                                   # Gemini CLI's own environment file (agentexec.py;
                                   # the root .env only where Gemini CLI is used)
                                   ".gemini/.env"))}
    caches = home / ".cache" / "swifty-sandbox"  # their MAC secrets (policy/cachefile.py)
    assert set(under(spec.unreadable_dirs, home)) == {
        str(home / ".ssh"), str(temp), str(caches / "walk"), str(caches / "bpf"),
        str(caches / "programs")}
    assert under(spec.unreadable_files, home) == (str(home / ".netrc"),)
    assert under(spec.placeholders, home) == (str(home / ".netrc"),)  # git stages none
    assert spec.read_roots is None and not spec.nested_namespaces


def test_plan_mode_has_no_writable_project(project: Path, home: Path) -> None:
    spec = Sandbox(project, home=home, mode="plan").spec()
    assert str(project) not in spec.writable
    assert spec.guard_dirs == ()


def test_rules_become_mounts(project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()  # outside the project: the user's own rule
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(~/.config/**/token)\n  effect: deny\n")
    rules(project, "- rule: ReadFile(*.env*)\n  effect: deny\n"
                   "- rule: WriteFile(migrations/**)\n  effect: deny\n"
                   "- rule: EditFile(*.lock)\n  effect: deny\n")
    (project / "a" / "b").mkdir(parents=True)
    (project / "a" / "b" / ".env.local").write_text("x")
    (project / "migrations").mkdir()
    (project / "poetry.lock").write_text("x")
    (home / ".config" / "tool" / "deep").mkdir(parents=True)
    (home / ".config" / "tool" / "deep" / "token").write_text("x")
    spec = Sandbox(project, home=home).spec()
    assert str(project / "a" / "b" / ".env.local") in spec.unreadable_files
    assert str(home / ".config" / "tool" / "deep" / "token") in spec.unreadable_files
    assert {str(project / "migrations"), str(project / "poetry.lock")} <= set(spec.read_only)


def test_a_glob_one_level_above_the_project_does_not_search_its_neighbours(
        project: Path, home: Path) -> None:
    """`/tmp/krb5cc_*` (the profile's) with the project in `/tmp`: the folder above is
    looked at one level down, and the project's basename globs stay in the project —
    not every other repository beside it marked and mounted, at a walk of them all."""
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(~/code/secret_*)\n  effect: deny\n")
    rules(project, "- rule: ReadFile(*.env*)\n  effect: deny\n")
    code = project.parent
    (code / "secret_1").write_text("k")
    (project / ".env").write_text("x")
    other = code / "other"
    (other / ".git" / "hooks").mkdir(parents=True)
    (other / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (other / ".env").write_text("x")
    (other / "deep" / "secret_2").mkdir(parents=True)
    spec = Sandbox(project, home=home).spec()
    assert {str(code / "secret_1"), str(project / ".env")} <= set(spec.unreadable_files)
    mentioned = (*spec.read_only, *spec.unreadable_files, *spec.unreadable_dirs,
                 *spec.markers, *spec.pinned, *spec.guard_dirs, *spec.guard_files)
    assert not [p for p in mentioned if p.startswith(f"{other}/")]


def test_a_writable_root_below_a_globs_folder_is_walked(project: Path, home: Path) -> None:
    """The other way round: a configured writable root beside the project, below the
    folder of `~/code/secret_*`, is walked on its own — its repository's hooks stay
    read-only, with no basename glob in any rule."""
    code = project.parent
    (code / "w" / ".git" / "hooks").mkdir(parents=True)
    (code / "w" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(f"sandbox: {{writable: [{code}/w]}}\n")
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(~/code/secret_*)\n  effect: deny\n")
    spec = Sandbox(project, home=home).spec()
    assert str(code / "w" / ".git" / "hooks") in spec.read_only
    assert str(code / "w" / ".git") in spec.markers


def test_write_everything_denied_makes_the_project_read_only(project: Path,
                                                             home: Path) -> None:
    rules(project, "- rule: WriteFile\n  effect: deny\n")
    assert str(project) not in Sandbox(project, home=home).spec().writable


def test_symlinked_secret_is_hidden_where_it_leads(project: Path, home: Path) -> None:
    rules(project, "- rule: ReadFile(*.pem)\n  effect: deny\n")
    (home / "real.key").write_text("k")
    (project / "cert.pem").symlink_to(home / "real.key")
    (project / "dangling.pem").symlink_to(home / "nowhere")
    spec = Sandbox(project, home=home).spec()
    assert under(spec.unreadable_files, home) == (str(home / "real.key"),)


def test_nested_repositories_are_protected(project: Path, home: Path) -> None:
    nested = project / "vendor" / "lib" / ".git"
    (nested / "hooks").mkdir(parents=True)
    (nested / "config").write_text("")
    spec = Sandbox(project, home=home).spec()
    assert {str(nested / "hooks"), str(nested / "config")} <= set(spec.read_only)
    assert {str(nested), str(project / "vendor" / "lib"),
            str(project / "vendor")} <= set(spec.pinned)


def test_strict_profile(project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("sandbox: {profile: strict}\n")
    spec = Sandbox(project, home=home).spec()
    assert spec.read_roots is not None and "/usr" in spec.read_roots
    assert str(project) in spec.read_roots
    assert spec.private_dirs and "/tmp" not in spec.writable


def test_scrub_env() -> None:
    from swifty_sandbox.policy.profile import SeccompProfile
    from swifty_sandbox.sandbox.spec.compiler import SandboxSpec

    spec = SandboxSpec("/p", "/p", None, (), (), (), (), (), (), (),
                       ("*TOKEN*", "*KEY*", "SSH_AUTH_SOCK"), ("KEYTIMEOUT", "MY_KEY_OK"),
                       SeccompProfile((), (), False, (), ()), False)
    env = {"PATH": "/bin", "GITHUB_TOKEN": "x", "aws_secret_key": "x", "KEYTIMEOUT": "1",
           "MY_KEY_OK": "1", "SSH_AUTH_SOCK": "/s", "HOME": "/h"}
    assert scrub_env(env, spec) == {"PATH": "/bin", "KEYTIMEOUT": "1", "MY_KEY_OK": "1",
                                    "HOME": "/h"}


def test_git_environment_config_goes_whole(project: Path, home: Path) -> None:
    # Gemini CLI runs commands with GIT_CONFIG_COUNT=1 and GIT_CONFIG_KEY_0/VALUE_0: the
    # `*KEY*` glob took the key and kept the count, and git refused every command.
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    spec = Sandbox(project, home=home).spec()
    env = {"PATH": "/bin", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager",
           "GIT_CONFIG_VALUE_0": "cat", "GIT_PAGER": "cat"}
    assert scrub_env(env, spec) == {"PATH": "/bin", "GIT_PAGER": "cat"}
    done = subprocess.run(["git", "status", "--short"], cwd=project, env=scrub_env(
        {**env, "PATH": "/usr/bin:/bin", "HOME": str(home)}, spec), capture_output=True,
        text=True, check=False)
    assert done.returncode == 0, done.stderr
    control = subprocess.run(["git", "status"], cwd=project, capture_output=True, text=True,
                             check=False, env={"PATH": "/usr/bin:/bin", "HOME": str(home),
                                               "GIT_CONFIG_COUNT": "1"})
    assert "missing config key" in control.stderr  # what the half-scrubbed env did


def test_default_profile_scrubs_the_common_secret_names(project: Path, home: Path) -> None:
    spec = Sandbox(project, home=home).spec()
    secret = ["GH_PAT", "AZURE_DEVOPS_EXT_PAT", "API_JWT", "jwt_secret_x", "DB_PASS",
              "SMTP_PASS", "MYSQL_PWD", "db_pwd", "SENTRY_DSN", "DATABASE_DSN",
              "GPG_PASSPHRASE", "AZURE_STORAGE_CONNECTION_STRING", "SLACK_WEBHOOK_URL",
              "REGISTRY_CREDS", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"]
    kept = ["PWD", "OLDPWD", "PATH", "HOME", "PASSAGE", "LANG", "KEYTIMEOUT", "COMPASS"]
    env = dict.fromkeys([*secret, *kept], "/some/value")
    assert sorted(scrub_env(env, spec)) == sorted(kept)


@pytest.mark.parametrize(("value", "dropped"), [
    ("postgres://app:s3cret@db.internal:5432/app", True),
    ("https://x-access-token:ghp_abc@github.com/o/r.git", True),
    ("redis://:pw@cache:6379/0", True),
    ("see https://user:pw@host/x in the docs", True),
    ("mongodb+srv://u:p@cluster0.example.net", True),
    ("https://github.com/o/r.git", False),
    ("ssh://git@github.com/o/r.git", False),  # a user name, no password
    ("http://localhost:8080/a@b", False),
    ("user:pass@host", False),  # no scheme: not a URL
])
def test_values_with_credentials_in_urls_are_dropped(project: Path, home: Path,
                                                     value: str, dropped: bool) -> None:
    spec = Sandbox(project, home=home).spec()
    env = {"DATABASE_URL": value, "REMOTE": value}
    assert scrub_env(env, spec) == ({} if dropped else env)


def test_a_kept_name_keeps_its_url(project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(
        "sandbox: {env: {keep: [DATABASE_URL]}}\n")
    spec = Sandbox(project, home=home).spec()
    env = {"DATABASE_URL": "postgres://a:b@h/db", "OTHER_URL": "postgres://a:b@h/db"}
    assert scrub_env(env, spec) == {"DATABASE_URL": "postgres://a:b@h/db"}


@pytest.mark.parametrize("count", [1000])
def test_expansion_is_fast_on_a_big_tree(project: Path, home: Path, count: int) -> None:
    rules(project, "- rule: ReadFile(*.env*)\n  effect: deny\n")
    for i in range(count):
        d = project / f"d{i % 50}" / f"e{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text("")
    (project / "d3" / ".env").write_text("")
    box = Sandbox(project, home=home)
    start = time.perf_counter()
    spec = compile_spec(box.policy, Mode.DEFAULT, None, Limits())
    elapsed = time.perf_counter() - start
    assert str(project / "d3" / ".env") in spec.unreadable_files
    assert elapsed < 1.0  # the benchmark measures it; this only catches a blow-up


def test_plan_mode_keeps_a_project_under_tmp_read_only(home: Path) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        project = Path(tmp).resolve() / "proj"
        (project / ".git").mkdir(parents=True)
        spec = Sandbox(project, home=home, mode="plan").spec()
        assert spec.writable == () and spec.temp_mounts == ("/tmp", "/var/tmp")
        assert spec.read_only[0] == str(project)  # bound over the project's own /tmp
        default = Sandbox(project, home=home).spec()
        assert default.writable == (str(project),)
        (home / ".swifty").mkdir()
        (home / "host-tmp.yaml").write_text("extends: default\ntmp: host\n")
        (home / ".swifty" / "config.yaml").write_text(
            f"sandbox: {{profile: {home / 'host-tmp.yaml'}}}\n")
        host = Sandbox(project, home=home).spec()  # opted in: the host's /tmp, shared
        assert host.temp_dir is None
        assert host.writable.index("/tmp") < host.writable.index(str(project))


def test_globs_match_names_with_newlines(project: Path, home: Path) -> None:
    """`a\\nb` is a directory name like any other: a glob crossing it still matches."""
    from swifty_sandbox.policy.rules import PathPattern, anchor_path_pattern

    pattern = PathPattern("*/**/.git/hooks",
                          anchor_path_pattern("*/**/.git/hooks", project, home))
    assert pattern.matches(f"{project}/x/a\nb/y/.git/hooks")
    rules(project, "- rule: WriteFile(src/**/*.key)\n  effect: deny\n")
    deep = project / "src" / "a\nb" / "c"
    deep.mkdir(parents=True)
    (deep / "id.key").write_text("k")
    assert str(deep / "id.key") in Sandbox(project, home=home).spec().read_only


def test_limits_from_settings_and_defaults(project: Path, home: Path) -> None:
    from swifty_sandbox.policy.limits import default_max_memory, default_max_processes

    box = Sandbox(project, home=home)
    limits = box._limits(None, 1 << 20, None, None)
    assert (limits.processes, limits.memory_bytes) == (default_max_processes(),
                                                       default_max_memory())
    assert not limits.processes_required
    off = Sandbox(project, home=home, sandbox_mode="off")._limits(None, 1 << 20, None, None)
    assert (off.processes, off.memory_bytes) == (None, None)  # `off` runs as it is
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(
        "sandbox: {limits: {processes: 4096, memory: 2G}}\n")
    limits = Sandbox(project, home=home)._limits(None, 1 << 20, None, None)
    assert (limits.processes, limits.memory_bytes) == (4096, 2 << 30)
    assert limits.processes_required
    limits = Sandbox(project, home=home)._limits(None, 1 << 20, 0, 0)
    assert (limits.processes, limits.memory_bytes) == (None, None)


def test_a_committed_config_can_only_lower_the_caps(project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(
        "sandbox: {limits: {processes: 300, memory: unlimited}}\n")
    (project / ".swifty").mkdir()
    (project / ".swifty" / "config.yaml").write_text(
        "sandbox: {limits: {processes: 500, memory: 1G}}\n")
    box = Sandbox(project, home=home)
    assert (box.policy.settings.max_processes, box.policy.settings.max_memory) == (
        300, 1 << 30)
    (project / ".swifty" / "config.yaml").write_text(
        "sandbox: {limits: {processes: unlimited, memory: 100%}}\n")
    (home / ".swifty" / "config.yaml").write_text("")
    box = Sandbox(project, home=home)
    assert (box.policy.settings.max_processes, box.policy.settings.max_memory) == (
        None, None)
    assert len(box.warnings) == 2 and all("cannot loosen" in w for w in box.warnings)


@pytest.mark.parametrize(("text", "size"), [("512M", 512 << 20), ("4G", 4 << 30),
                                            ("1.5GiB", 3 << 29), ("1024", 1024),
                                            ("2gb", 2 << 30), ("unlimited", 0)])
def test_memory_sizes(text: str, size: int) -> None:
    from swifty_sandbox.policy.limits import parse_memory

    assert parse_memory(text) == size


@pytest.mark.parametrize("text", ["", "0", "-1", "4X", "150%", "lots", "1e9"])
def test_bad_memory_sizes(text: str) -> None:
    from swifty_sandbox.policy.limits import parse_memory

    with pytest.raises(ValueError, match="memory cap"):
        parse_memory(text)


def test_bad_limits_in_a_config_file_name_the_line(project: Path, home: Path) -> None:
    from swifty_sandbox.policy import PolicyFileError

    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(
        "sandbox:\n  limits:\n    processes: many\n")
    with pytest.raises(PolicyFileError) as info:
        Sandbox(project, home=home)
    assert info.value.line == 3 and "`many`" in str(info.value)


@pytest.mark.parametrize("text", [
    "- rule: ReadFile(*.env*)\n  effect: deny\n",
    "- rule: ReadFile(*.env*)\n  effect: deny\n- rule: ReadFile(*.env.example)\n"
    "  effect: allow\n",
    "- rule: ReadFile(**/deep/.env.local)\n  effect: deny\n",
])
def test_the_folders_above_a_hidden_file_are_pinned(project: Path, home: Path,
                                                    text: str) -> None:
    """Also where the file's own name hides it wherever it goes: a concurrent command
    renaming its folders back and forth (`mv pkg pkg2 && mv pkg2 pkg`) made another
    run's walk miss it, or that run's mounts land beside it (bwrap mounts by path),
    and it read the file in 2 to 6 runs of 40. Pinned, they cannot be renamed."""
    (project / "pkg" / "deep").mkdir(parents=True)
    (project / "pkg" / "deep" / ".env.local").write_text("k")
    rules(project, text)
    spec = Sandbox(project, home=home).spec()
    assert str(project / "pkg" / "deep" / ".env.local") in spec.unreadable_files
    assert {str(project / "pkg"), str(project / "pkg" / "deep")} <= set(spec.pinned)


def test_a_links_target_hidden_through_the_link_stays_pinned(project: Path,
                                                            home: Path) -> None:
    """`secret.txt` is hidden only as the target of `key.env`: a move of its folder
    would leave the link dangling and the file unhidden, so that folder is pinned."""
    (project / "real").mkdir()
    (project / "real" / "secret.txt").write_text("k")
    (project / "key.env").symlink_to("real/secret.txt")
    rules(project, "- rule: ReadFile(*.env*)\n  effect: deny\n")
    spec = Sandbox(project, home=home).spec()
    assert str(project / "real" / "secret.txt") in spec.unreadable_files
    assert str(project / "real") in spec.pinned


def _deep(project: Path) -> Path:
    """A folder whose absolute path is a few bytes short of PATH_MAX, made by relative
    steps (as a command would), holding a `.env.local`."""
    parts = near_path_max(project, 4090).split("/")
    fd = os.open(project, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            os.mkdir(part, dir_fd=fd)
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open(".env.local", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    finally:
        os.close(fd)
    return project.joinpath(*parts)


def test_a_hidden_file_past_path_max_refuses_the_run(project: Path, home: Path) -> None:
    """Its folder can be listed, the file cannot be named by its absolute path
    (ENAMETOOLONG): its check was skipped, so nothing hid it, and a command read it by
    a relative path. The run refuses instead; the control: a folder that is a byte
    shorter holds a file that is hidden."""
    from swifty_sandbox.sandbox.spec.compiler import SetupError

    rules(project, "- rule: ReadFile(*.env*)\n  effect: deny\n")
    folder = _deep(project)
    assert len(str(folder)) < 4096 <= len(str(folder / ".env.local"))
    with pytest.raises(SetupError, match="cannot be checked"):
        Sandbox(project, home=home).spec()
    (project / "short").mkdir()
    (project / "short" / ".env.local").write_text("k")
    import shutil
    shutil.rmtree(project / folder.relative_to(project).parts[0])
    spec = Sandbox(project, home=home).spec()
    assert str(project / "short" / ".env.local") in spec.unreadable_files


def test_something_left_unresolved_past_path_max_refuses_the_run(project: Path,
                                                                 home: Path) -> None:
    """A path recorded as unresolved (`aftercare`) that cannot be looked at by its path
    (ENAMETOOLONG) is not "gone": later runs refuse while it may be there."""
    import json

    from swifty_sandbox.policy.paths import project_state_dir
    from swifty_sandbox.sandbox.spec.compiler import SetupError

    folder = _deep(project)
    state = project_state_dir(project, home) / "unresolved"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps(str(folder / ".env.local")) + "\n")
    with pytest.raises(SetupError, match="left by an earlier command"):
        Sandbox(project, home=home).spec()
    state.write_text(json.dumps(str(project / "gone")) + "\n")  # control: gone is gone
    Sandbox(project, home=home).spec()
