"""What is trusted outside the sandbox after a command: the host's sysctls and password
hash backups (as root), the launcher the next hook call finds on PATH, a submodule's git
dir with a hook, the config a protected git hook runs. Each a real attack, its unconfined
control, and a judgement from outside."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult

Attack = Callable[..., RunResult]
Runner = Callable[..., RunResult]

_SYSCTL = Path("/proc/sys/kernel/printk_ratelimit_burst")  # harmless to change briefly


@pytest.mark.serial  # the host's sysctl: another test's reset would undo this one's control
@pytest.mark.skipif(os.geteuid() != 0, reason="only root (uid 0 → 0) may write sysctls")
def test_host_sysctls_are_read_only_as_root(attack: Attack) -> None:
    """bwrap covers /proc/sys only when it looks writable, and its directory never does
    (mode 0555); yet to uid 0 every sysctl file is: `kernel.core_pattern = |/proj/x`
    would have the kernel run a program of the command's as root outside."""
    original = _SYSCTL.read_text().strip()
    changed = str(int(original) + 1)
    try:
        attack(f"echo {changed} > {_SYSCTL}", lambda: _SYSCTL.read_text().strip() == changed,
               lambda: _SYSCTL.write_text(original + "\n"))
    finally:
        _SYSCTL.write_text(original + "\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="unreadable to other users anyway")
@pytest.mark.parametrize("path", ["/etc/shadow-", "/etc/gshadow-", "/etc/security/opasswd"])
def test_backup_password_hashes_as_root(confined: Runner, unconfined: Runner,
                                        path: str) -> None:
    """`/etc/shadow` was hidden, its backup `/etc/shadow-` (the same hashes) was not:
    root inside keeps its file permissions."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        pytest.skip(f"{path} is missing or empty here")
    command = f"cat {path} | wc -c"
    assert int(unconfined(command).stdout) > 0, "control: root cannot read it"
    assert int(confined(command).stdout) == 0, "ESCAPE"


# -- the next hook call: `swifty-sandbox` looked up on PATH ------------------------------

@pytest.mark.parametrize("bin_dir", [".venv/bin", "tools/bin", "."])
@pytest.mark.parametrize("exists", [True, False])
def test_a_launcher_planted_on_path_is_not_run_by_the_next_hook(
        attack: Attack, project: Path, monkeypatch: pytest.MonkeyPatch, bin_dir: str,
        exists: bool) -> None:
    """`init` installs `swifty-sandbox hook AGENT` in the project's settings, looked up
    on the agent's PATH outside any sandbox: with the project's venv activated (or a
    relative PATH entry) a command could put its own `swifty-sandbox` first."""
    directory = (project / bin_dir).resolve()
    entry = bin_dir if bin_dir == "." else str(directory)
    monkeypatch.setenv("PATH", f"{entry}:{os.environ['PATH']}")
    planted = directory / "swifty-sandbox"

    def reset() -> None:
        for path in (planted, *directory.glob(".swifty-blocked-*")):
            path.unlink(missing_ok=True)
        if not exists and directory != project and directory.exists():
            directory.rmdir()
        if exists:
            directory.mkdir(parents=True, exist_ok=True)

    reset()

    def worked() -> bool:
        return planted.is_file() and b"pwned" in planted.read_bytes()

    attack(f"mkdir -p {directory} && printf '#!/bin/sh\\necho pwned\\n' > "
           f"{planted} && chmod +x {planted}", worked, reset)


# -- what the agents run on the host by name: `git`, `rg`, … looked up on PATH -----------

@pytest.mark.parametrize("bin_dir", [".venv/bin", "."])
@pytest.mark.parametrize("exists", [True, False])
@pytest.mark.parametrize("program", ["git", "rg", "node", "bash"])
def test_a_program_the_agent_runs_planted_on_path(
        attack: Attack, project: Path, outside_temp: Path, monkeypatch: pytest.MonkeyPatch,
        bin_dir: str, exists: bool, program: str) -> None:
    """The agents run `git status`, `git log`, their search (`rg`), their own `node` and
    a shell by name on the host, unconfined, through the PATH they were started with:
    with the project's venv activated a command could put its own `git` first, and the
    agent's next `git status` ran it outside the sandbox. Judged as the agent would
    meet it: the program run by name from that PATH, a marker written outside."""
    import contextlib
    import subprocess

    directory = (project / bin_dir).resolve()
    entry = bin_dir if bin_dir == "." else str(directory)
    monkeypatch.setenv("PATH", f"{entry}:{os.environ['PATH']}")
    planted = directory / program
    marker = outside_temp / f"ran-{program}"

    def reset() -> None:
        marker.unlink(missing_ok=True)
        for path in (planted, *directory.glob(".swifty-blocked-*")):
            path.unlink(missing_ok=True)
        if not exists and directory != project and directory.exists():
            directory.rmdir()
            (project / ".venv").rmdir()
        if exists:
            directory.mkdir(parents=True, exist_ok=True)

    reset()

    def worked() -> bool:
        with contextlib.suppress(OSError):  # gone, and no other on PATH: not run
            subprocess.run([program, "--version"], cwd=project, capture_output=True,
                           timeout=30, check=False)
        return marker.exists()

    attack(f"mkdir -p {directory} && printf '#!/bin/sh\\ntouch {marker}\\n' > "
           f"{planted} && chmod +x {planted}", worked, reset)


@pytest.mark.parametrize("how", ["rewrite the target", "relink the name"])
def test_a_program_on_path_through_a_link_is_kept(
        attack: Attack, project: Path, outside_temp: Path, monkeypatch: pytest.MonkeyPatch,
        how: str) -> None:
    """`node_modules/.bin` on PATH (direnv's `PATH_add`) holds links: `rg ->
    ../@vscode/ripgrep/bin/rg`, as npm installs it. Every run was refused (a mount
    through a link); now the file it leads to is read-only and a link the command
    changed is moved aside and put back. Judged by running `rg` by name from there."""
    import contextlib
    import subprocess

    bin_dir = project / "node_modules" / ".bin"
    package = project / "node_modules" / "@vscode" / "ripgrep" / "bin"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    marker = outside_temp / "ran-linked-rg"

    def reset() -> None:
        import shutil

        marker.unlink(missing_ok=True)
        shutil.rmtree(project / "node_modules", ignore_errors=True)
        package.mkdir(parents=True)
        bin_dir.mkdir()
        (package / "rg").write_text("#!/bin/sh\necho rg\n")
        (package / "rg").chmod(0o755)
        (bin_dir / "rg").symlink_to("../@vscode/ripgrep/bin/rg")

    reset()

    def worked() -> bool:
        with contextlib.suppress(OSError):
            subprocess.run(["rg"], cwd=project, capture_output=True, timeout=30,
                           check=False)
        return marker.exists()

    evil = f"#!/bin/sh\\ntouch {marker}\\n"
    command = (f"printf '{evil}' > node_modules/@vscode/ripgrep/bin/rg"
               if how == "rewrite the target" else
               f"printf '{evil}' > evil && chmod +x evil && ln -sf ../../evil "
               "node_modules/.bin/rg")
    result = attack(command, worked, reset)
    assert result.exit_code != 125, result.stderr  # the run is not refused


# -- the next hook call's Python: a PYTHONPATH into the project -------------------------

@pytest.mark.parametrize("entry", ["src", "{project}/src"])
def test_a_module_planted_on_pythonpath_is_not_run_by_the_next_hook(
        confined: Runner, project: Path, outside_temp: Path,
        monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    """The agent's environment reaches the hook, the rewritten `run` and the MCP server,
    which run on the host: with `PYTHONPATH=src` (direnv, a src layout) a confined
    command may write the project's `src/` — that is its work — and a
    `sitecustomize.py` there ran at the next hook's start-up, unconfined. The control
    is the launcher started as its `#!` line starts it; the hook, the rewritten command
    and Codex's and Gemini's rules name the interpreter with `-E`."""
    import shlex
    import subprocess

    from swifty_sandbox.cli.hook import runner
    from swifty_sandbox.cli.init import hook_command
    from swifty_sandbox.policy.agents import Agent

    (project / "src").mkdir()
    monkeypatch.setenv("PYTHONPATH", entry.format(project=project))
    marker = outside_temp / "ran-sitecustomize"
    confined(f"printf 'open(%s, \"w\").close()\\n' {shlex.quote(repr(str(marker)))} "
             "> src/sitecustomize.py")
    assert (project / "src" / "sitecustomize.py").is_file()  # the project's source: its own

    def call(command: list[str]) -> bool:
        subprocess.run(command, cwd=project, input="{}", text=True, capture_output=True,
                       timeout=60, check=False)
        ran = marker.exists()
        marker.unlink(missing_ok=True)
        return ran

    script = runner()[-1]
    assert call([script, "hook", "claude-code"]), "control: PYTHONPATH is not honoured"
    assert not call(["sh", "-c", hook_command(Agent.CLAUDE_CODE)]), "ESCAPE: the hook"
    assert not call([*runner(), "run", "--", "true"]), "ESCAPE: the rewritten command"


# -- what git trusts: a submodule's git dir planted in `.git/modules` --------------------

def _git(cwd: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a",
                    "-c", "protocol.file.allow=always", "-C", str(cwd), *args],
                   check=True, capture_output=True)


def test_a_submodule_git_dir_planted_with_a_hook(attack: Attack, project: Path,
                                                 outside_temp: Path) -> None:
    """The walk after the command never looked inside `.git`, so a new
    `.git/modules/NAME` with a live hook stayed; the user's next `git submodule update
    --init` checked the submodule out with it, running the hook outside."""
    import shutil

    (project / ".git").rmdir()
    _git(project, "init", "-q")
    _git(project, "commit", "-q", "--allow-empty", "-m", "init")
    marker = outside_temp / "pwned"
    script = f"""set -e
src=$(mktemp -d); git init -q "$src"
git -C "$src" -c user.email=a@b -c user.name=a commit -q --allow-empty -m x
mkdir -p .git/modules
git -c protocol.file.allow=always clone -q --separate-git-dir=.git/modules/evil "$src" sub
rm -rf "$src"  # unconfined (the control), it is in the host's /tmp
printf '#!/bin/sh\\ntouch {marker}\\n' > .git/modules/evil/hooks/post-checkout
chmod +x .git/modules/evil/hooks/post-checkout
printf '[submodule "evil"]\\n\\tpath = sub\\n\\turl = ./sub\\n' > .gitmodules
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub
rm -rf sub; mkdir sub
"""

    def worked() -> bool:
        import subprocess

        subprocess.run(["git", "-C", str(project), "submodule", "update", "--init"],
                       capture_output=True)
        return marker.exists()

    def reset() -> None:
        marker.unlink(missing_ok=True)
        _git(project, "reset", "-q")
        for path in (project / ".git" / "modules", project / "sub"):
            shutil.rmtree(path, ignore_errors=True)
        (project / ".gitmodules").unlink(missing_ok=True)

    result = attack(script, worked, reset)
    assert "hooks/post-checkout" in result.stderr


@pytest.mark.xfail(strict=True, reason="design: a git hook that runs the work tree's own "
                   "config (pre-commit, lefthook, husky → lint-staged) is protected, its "
                   "config is not; fix: keep that config read-only when the hook is such "
                   "a shim")
def test_the_config_a_protected_hook_runs(attack: Attack, project: Path,
                                          outside_temp: Path) -> None:
    """`.git/hooks/pre-commit` (pre-commit's shim) is read-only inside, but it runs
    whatever `.pre-commit-config.yaml` names, at the user's next `git commit`."""
    import shutil
    import subprocess
    import sys

    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).with_name(
        "pre-commit"))
    if not os.path.exists(pre_commit):
        pytest.skip("pre-commit is not installed")
    (project / ".git").rmdir()
    _git(project, "init", "-q")
    _git(project, "commit", "-q", "--allow-empty", "-m", "init")
    subprocess.run([pre_commit, "install"], cwd=project, check=True, capture_output=True)
    marker = outside_temp / "pwned"
    config = project / ".pre-commit-config.yaml"

    def worked() -> bool:
        subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                        "--allow-empty", "-m", "x"], cwd=project, capture_output=True)
        return marker.exists()

    def reset() -> None:
        marker.unlink(missing_ok=True)
        config.unlink(missing_ok=True)

    attack(f"printf 'repos:\\n- repo: local\\n  hooks:\\n  - id: x\\n    name: x\\n"
           f"    entry: touch {marker}\\n    language: system\\n    always_run: true\\n"
           f"    pass_filenames: false\\n' > .pre-commit-config.yaml", worked, reset)


# -- the environment an agent loads: Gemini CLI's `.env` ----------------------------------

def _gemini_loads(project: Path, home: Path) -> dict[str, str]:
    """The variables Gemini CLI (0.61, `loadEnvironment`) takes from the folder it starts
    in, a trusted one: `.gemini/.env`, else `.env`, each `KEY=VALUE` line not set already."""
    for name in (".gemini/.env", ".env"):
        path = project / name
        if path.is_file():
            pairs = (line.split("=", 1) for line in path.read_text().splitlines()
                     if "=" in line and not line.lstrip().startswith("#"))
            return {key.strip(): value.strip().strip("'\"") for key, value in pairs}
    return {}


@pytest.mark.parametrize("name", [".env", ".gemini/.env"])
@pytest.mark.parametrize("exists", [True, False])
def test_an_env_file_gemini_loads_cannot_run_code_on_the_host(
        attack: Attack, project: Path, home: Path, outside_temp: Path, name: str,
        exists: bool) -> None:
    """Gemini CLI puts a trusted folder's `.env` into its own environment, which every
    process it starts on the host inherits — the bash that runs our rewritten `run`
    command first: `BASH_ENV` there ran a script of the command's outside the sandbox
    at the agent's next shell call (shown with the real Gemini CLI 0.61)."""
    import subprocess

    (home / ".gemini").mkdir(exist_ok=True)  # a Gemini CLI user (agents.env_files)
    marker = outside_temp / "pwned"
    target = project / name
    script = project / "evil.sh"
    script.write_text(f"touch {marker}\n")

    def reset() -> None:
        marker.unlink(missing_ok=True)
        target.unlink(missing_ok=True)
        for path in target.parent.glob(target.name + ".swifty-blocked-*"):
            path.unlink()
        if exists:
            target.parent.mkdir(exist_ok=True)
            target.write_text("APP_PORT=8080\n")

    reset()

    def worked() -> bool:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **_gemini_loads(project, home)}
        subprocess.run(["bash", "-c", "true"], env=env, check=False)
        return marker.exists()

    attack(f"mkdir -p {target.parent} && echo BASH_ENV={script} >> {target}", worked, reset)


def test_a_root_env_file_stays_writable_where_no_agent_loads_it(
        confined: Runner, project: Path, home: Path) -> None:
    """Everyday work (`cp .env.example .env`) where neither the user nor the project has
    Gemini CLI; with its config dir, the same write is refused (the attack above)."""
    (project / ".env.example").write_text("APP_PORT=8080\n")
    result = confined("cp .env.example .env && cat .env")
    assert result.exit_code == 0 and (project / ".env").read_text() == "APP_PORT=8080\n", \
        result
    (project / ".env").unlink()
    (home / ".gemini").mkdir()
    refused = confined("cp .env.example .env")
    assert refused.exit_code != 0 or not (project / ".env").exists(), refused


# -- Claude Code's nested skills: hooks in a `.claude/` below the project ----------------

_SKILL = ("---\nname: helper\nhooks:\n  PreToolUse:\n"
          "    - hooks: [{type: command, command: x}]\n---\n")


@pytest.mark.parametrize("exists", [True, False])
def test_a_nested_skill_with_a_hook_is_not_left_for_the_agent(
        attack: Attack, project: Path, exists: bool) -> None:
    """Claude Code (2.1) finds the skills of a `.claude/` below the project once it works
    on a file there, and runs a skill's frontmatter hooks on the host: planted by a
    command in `pkg/.claude/skills/`, read, then launched, its hook ran outside (shown
    with the real CLI). Only the project's own `.claude/` was kept."""
    skill = project / "pkg" / ".claude" / "skills" / "helper" / "SKILL.md"
    blocked = project / "pkg"

    def reset() -> None:
        import shutil

        for path in blocked.glob(".swifty-blocked-*"):
            shutil.rmtree(path)
        if exists:
            skill.parent.mkdir(parents=True, exist_ok=True)
            skill.write_text("---\nname: helper\n---\nthe user's own\n")
        else:
            shutil.rmtree(project / "pkg", ignore_errors=True)
            (project / "pkg").mkdir()

    reset()
    (project / "skill.txt").write_text(_SKILL)

    def worked() -> bool:
        return skill.is_file() and "hooks" in skill.read_text()

    attack(f"mkdir -p {skill.parent} && cp skill.txt {skill}", worked, reset)
