"""Holes found by red-teaming the sandbox as it was, each proved by a real attack, its
unconfined control, and a judgement from outside."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult

Attack = Callable[..., RunResult]
Runner = Callable[..., RunResult]

_SYSCTL = Path("/proc/sys/kernel/printk_ratelimit_burst")  # harmless to change briefly


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


# -- decisions: a variable's value evaluated as code ----------------------------------

_EVALUATED = [
    "x='a[$(touch {f})]'; echo $((x))",        # arithmetic evaluates the value, subscript too
    "x='a[$(touch {f})]'; echo ${{!x}}",         # indirect expansion evaluates the subscript
    "x='$(touch {f})'; echo ${{x@P}}",           # prompt expansion runs substitutions
    "read x <<< 'a[$(touch {f})]'; echo $((x+1))",
    "set -- 'a[$(touch {f})]'; echo $(($1))",
    "bash -c 'echo $(($1))' _ 'a[$(touch {f})]'",  # asked (the payload is an argument)
]


@pytest.mark.parametrize("template", _EVALUATED)
def test_a_value_evaluated_as_code_is_not_allowed(project: Path, home: Path,
                                                  template: str) -> None:
    import subprocess

    from swifty_sandbox import Sandbox
    from tests.conftest import write_rules

    write_rules(home / ".swifty" / "permissions.yaml", [("Bash(echo *)", "allow"),
                                                        ("Bash(read *)", "allow")])
    target = project / "pwned"
    command = template.format(f=target)
    subprocess.run(["bash", "-c", command], cwd=project, check=False)
    assert target.exists(), "control: bash does not run it"
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.check(command).effect.value != "allow", command
    deadly = template.replace("touch {f}", "rm -rf ~").replace("{{", "{").replace("}}", "}")
    verdict = Sandbox(project, home=home, mode="bypassPermissions").check(deadly).effect.value
    assert verdict == ("ask" if template.startswith("bash -c") else "deny"), deadly


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


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_the_file_tools_cannot_rewrite_the_launcher_on_path(
        project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, tool: str) -> None:
    """The agents' file tools write outside the sandbox: with the project's venv on
    PATH, a Write to `.venv/bin/swifty-sandbox` (allowed in acceptEdits like any project
    file) replaced what the next hook call runs."""
    import json

    from swifty_sandbox.sandbox.agents.hooks import Agent, answer_hook

    bin_dir = project / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")

    def decision(path: Path) -> str:
        payload = {"session_id": "s", "transcript_path": "/t", "cwd": str(project),
                   "permission_mode": "acceptEdits", "hook_event_name": "PreToolUse",
                   "tool_name": tool, "tool_input": {"file_path": str(path), "content": "x",
                                                     "old_string": "a", "new_string": "b"}}
        answer = answer_hook(Agent.CLAUDE_CODE, json.dumps(payload), ["swifty-sandbox"],
                             home=home)
        out: str = json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecision"]
        return out

    assert decision(bin_dir / "other-tool") == "allow"  # control: project files are
    assert decision(bin_dir / "swifty-sandbox") == "deny"


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


# -- serve: every answer is JSON ---------------------------------------------------------

@pytest.mark.parametrize("token", ["1e400", "-1e400", "NaN", "Infinity"])
def test_serve_answers_stay_json_for_a_non_finite_id(project: Path, home: Path,
                                                     token: str) -> None:
    """`{"id": 1e400, …}` was read as infinity and echoed as `Infinity`, which no
    strict JSON reader (the agent's) accepts: its loop broke on our answer."""
    import json
    import subprocess
    import sys

    line = f'{{"id": {token}, "tool": "ReadFile", "path": "README"}}\n'
    done = subprocess.run([sys.executable, "-m", "swifty_sandbox.cli", "serve", "--project",
                           str(project)], input=line.encode(), capture_output=True,
                          timeout=60, cwd=project.parent)
    answers = done.stdout.decode().splitlines()
    assert answers, done.stderr
    def strict(token: str) -> None:
        pytest.fail(f"not JSON: {token} in {answers}")

    for answer in answers:
        assert json.loads(answer, parse_constant=strict)["type"] == "error"


# -- decisions: a deny holds through more wrappers ----------------------------------------

@pytest.mark.parametrize("wrapper", [
    "setarch x86_64 -R", "linux64", "numactl -C 0", "prlimit --nofile=64", "catchsegv",
    "eatmydata", "dbus-run-session", "xvfb-run -a", "torsocks", "proxychains4 -f /dev/null",
    "firejail --quiet", "valgrind --tool=none", "systemd-run --user -p Nice=5",
    # runners: a subcommand runs the command
    "uv run", "uv run --with rich", "poetry run", "pipenv run", "conda run -n base",
    "bundle exec", "yarn exec", "pnpm exec", "npm exec --", "mise exec node@20 --",
    "direnv exec .", "aws-vault exec work --", "doppler run --", "op run --",
    "perf record -o out --", "swifty-sandbox run --sandbox off --",
])
def test_the_blacklist_sees_through_more_wrappers(project: Path, home: Path,
                                                  wrapper: str) -> None:
    """README: "a deny or ask rule matches every spelling of its command: any wrapper";
    these ran their arguments unseen (`setarch x86_64 rm -rf ~` allowed in
    bypassPermissions, where the blacklist is all that holds)."""
    import shutil
    import subprocess

    from swifty_sandbox import Sandbox

    program = wrapper.split()[0]
    if program in ("setarch", "linux64") and shutil.which(program):
        marker = project / "ran"  # control: the wrapper really runs its arguments
        subprocess.run([*wrapper.split(), "touch", str(marker)], check=True)
        assert marker.exists()
    box = Sandbox(project, home=home, mode="bypassPermissions", sandbox_mode="off")
    decision = box.check(f"{wrapper} rm -rf ~")
    assert decision.effect.value == "deny", decision


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


def test_a_runner_allow_still_matches_as_written(project: Path, home: Path) -> None:
    """What `uv run` runs meets deny rules and the blacklist; an allow of the command
    as written still holds (`Bash(uv run pytest *)`)."""
    from swifty_sandbox import Sandbox
    from tests.conftest import write_rules

    write_rules(home / ".swifty" / "permissions.yaml", [("Bash(uv run pytest *)", "allow"),
                                                        ("Bash(git push *)", "deny")])
    box = Sandbox(project, home=home, sandbox_mode="manual")
    assert box.check("uv run pytest -x tests").effect.value == "allow"
    assert box.check("uv run git push origin main").effect.value == "deny"
    assert box.check("poetry run git push").effect.value == "deny"
