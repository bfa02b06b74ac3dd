"""The file-tool invariants, asked of every surface: the Claude Code hook (its documented
PreToolUse JSON, through the real CLI), the MCP server (the official SDK's client,
tests/cli/mcp_client.py, which performs the I/O), `serve`, `check --batch` and the
Python API's `Sandbox.check`.

One table, `INVARIANTS`; each surface iterates all of it. A path is decided where the
kernel opens it (links first, then `..`), deny patterns match every spelling, and what
runs outside the sandbox (agents' settings at any depth, swifty's own launcher and code,
shell rc files, `~/.swifty`) is never written. Each row is judged by the surface's
answer and, for the MCP server, from outside as well: the secret is not in its reply,
the protected file is unchanged, the file that must not appear does not. The allowed
rows are the controls: the same surface, the same project, a plain path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import swifty_sandbox.sandbox
from swifty_sandbox import Request, Sandbox, Tool

from .test_warm import child_socket_path, script_python, stop_server

pytestmark = pytest.mark.bwrap

SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))
CLIENT = Path(__file__).with_name("mcp_client.py")
SECRET = "SECRET-KEY-MATERIAL"
ORIGINAL = "# the user's own\n"
PACKAGE = Path(swifty_sandbox.sandbox.__file__).parent
BLOCKED = "blocked"  # deny, an ask nobody answers here, or refused as input: not done


@dataclass(frozen=True)
class Row:
    """One invariant: a request, what every surface must answer (`allow`, `deny` or
    `BLOCKED`), a word of the reason, and what must hold on disk afterwards."""

    name: str
    tool: Tool
    path: str  # `{p}` the project, `{h}` the home, `{pkg}` this package's sandbox/
    expect: str
    reason: str = ""
    unchanged: tuple[str, ...] = ()  # files whose content must stay as it was
    absent: tuple[str, ...] = ()  # files that must not be created
    setup: Callable[[Path, Path], None] = field(default=lambda p, h: None)


def _updir(p: Path, h: Path) -> None:
    (p / "a").mkdir()
    (p / "a" / "b").symlink_to("../..")  # a/b/.. is home/code, not a


def _links(p: Path, h: Path) -> None:
    (p / "src").mkdir()
    (p / "src" / "lib").symlink_to(h / ".ssh")  # a directory link inside the project
    (p / "link.key").symlink_to("plain.txt")
    (p / "plain.txt").write_text("plain\n")
    (p / "loop").symlink_to("loop")
    (p / "proc").symlink_to("/proc/self/root")
    (p / "dangling").symlink_to("../../.bash_login")  # missing, protected once made
    (p / "out").symlink_to(h / "outside")
    os.mkfifo(p / "fifo")
    os.link(h / ".gitconfig", p / "notes.txt")
    os.link(h / ".ssh" / "id_rsa", p / "copy.txt")
    (p / "d1" / "d2").mkdir(parents=True)
    (p / "in").symlink_to("d1/d2")  # in/../.. is the project; lexically its parent
    (p / "bin").mkdir()
    (p / "ok.txt").write_text("fine\n")


def _agent_runs(p: Path, h: Path) -> None:
    """Settings that run a project script (a hook) and an MCP server's script."""
    # Not in `.claude/hooks/`, which is the agent's whole: a script anywhere.
    (p / "scripts" / "hooks").mkdir(parents=True)
    (p / "scripts" / "hooks" / "guard.sh").write_text(ORIGINAL)
    (p / ".claude").mkdir()
    hook = {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/scripts/hooks/guard.sh'}
    inline = {"type": "command", "command": "bash -c 'cd tools && ./lint.sh'"}
    (p / "tools").mkdir()
    (p / "tools" / "lint.sh").write_text(ORIGINAL)
    (p / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook, inline]}]}}))
    (p / "srv").mkdir()
    (p / "srv" / "index.js").write_text(ORIGINAL)
    (p / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {
        "command": "node", "args": ["srv/index.js"]}}}))


def _git_trust(p: Path, h: Path) -> None:
    """A repository whose git runs code from what the file tools could write: its
    `commondir`, a submodule's gitfile, a bare repository's config, the hooks directory
    and an included config file its config names."""
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    subprocess.run(["git", "-C", str(p), "config", "core.hooksPath", "githooks"], check=True)
    subprocess.run(["git", "-C", str(p), "config", "include.path", "../team.gitconfig"],
                   check=True)
    (p / "team.gitconfig").write_text(ORIGINAL)
    (p / "githooks").mkdir()
    (p / "vendored").mkdir()
    (p / "vendored" / ".git").write_text("gitdir: ../.git/modules/vendored\n")
    subprocess.run(["git", "init", "-q", "--bare", str(p / "remote.git")], check=True)
    (p / "secrets.env").write_text(SECRET + "\n")
    (p / ".gemini").mkdir()  # a Gemini CLI project: its .env files are what it runs


def _half_bare(p: Path, h: Path) -> None:
    """Bare repositories planted one write at a time, each missing its last part: the
    config with code came first, while the directory was no repository."""
    for name, parts in (("halfbare", ("objects", "refs")), ("headless", ("objects",))):
        for part in parts:
            (p / name / part).mkdir(parents=True)
    (p / "halfbare" / "config").write_text("[core]\n\tfsmonitor = evil\n")
    (p / "headless" / "HEAD").write_text("ref: refs/heads/main\n")
    (p / "shared" / "objects").mkdir(parents=True)
    (p / "shared" / "refs").mkdir()
    (p / "lonehead").mkdir()
    (p / "lonehead" / "HEAD").write_text("ref: refs/heads/main\n")


INVARIANTS: tuple[Row, ...] = (
    Row("read through a/b/..", Tool.READ_FILE, "{p}/a/b/../.ssh/id_ed25519", "deny",
        "secrets", setup=_updir),
    Row("write ~/.bashrc through a/b/..", Tool.WRITE_FILE, "{p}/a/b/../.bashrc", "deny",
        "protected", unchanged=("{h}/.bashrc",)),
    Row("write ~/.swifty through a/b/..", Tool.WRITE_FILE,
        "{p}/a/b/../.swifty/permissions.yaml", "deny", "protected",
        unchanged=("{h}/.swifty/permissions.yaml",)),
    Row("edit agent settings at any depth", Tool.EDIT_FILE, "{p}/sub/.claude/settings.json",
        "deny", "hook settings", unchanged=("{p}/sub/.claude/settings.json",)),
    Row("write new agent settings at any depth", Tool.WRITE_FILE,
        "{p}/pkg/.gemini/settings.json", "deny", "hook settings",
        absent=("{p}/pkg/.gemini/settings.json",)),
    Row("write a skill whose frontmatter holds hooks", Tool.WRITE_FILE,
        "{p}/.claude/skills/x/SKILL.md", "deny", "hook settings",
        absent=("{p}/.claude/skills/x/SKILL.md",)),
    Row("write a subagent at any depth", Tool.WRITE_FILE, "{p}/pkg/.claude/agents/x.md",
        "deny", "hook settings", absent=("{p}/pkg/.claude/agents/x.md",)),
    Row("write the dev-server command Claude Code's preview starts", Tool.WRITE_FILE,
        "{p}/.claude/launch.json", "deny", "hook settings",
        absent=("{p}/.claude/launch.json",)),
    Row("write a script Claude Code's Workflow tool runs", Tool.WRITE_FILE,
        "{p}/.claude/workflows/x.js", "deny", "hook settings",
        absent=("{p}/.claude/workflows/x.js",)),
    Row("write a task Claude Code runs in a later session", Tool.WRITE_FILE,
        "{p}/.claude/scheduled_tasks.json", "deny", "hook settings",
        absent=("{p}/.claude/scheduled_tasks.json",)),
    Row("write agent settings in home through a/b/..", Tool.WRITE_FILE,
        "{p}/a/b/../.codex/config.toml", "deny", "hook settings",
        absent=("{h}/.codex/config.toml",)),
    Row("write the user's agent settings where CLAUDE_CONFIG_DIR moved them",
        Tool.WRITE_FILE, "{h}/claude-config/settings.json", "deny", "hook settings",
        absent=("{h}/claude-config/settings.json",)),
    Row("write the launcher on PATH", Tool.WRITE_FILE, "{p}/bin/swifty-sandbox", "deny",
        "swifty-sandbox or its hooks run", absent=("{p}/bin/swifty-sandbox",)),
    Row("write the git the agent runs from PATH", Tool.WRITE_FILE, "{p}/bin/git", "deny",
        "swifty-sandbox or its hooks run", absent=("{p}/bin/git",)),
    Row("rewrite the script a hook in the settings runs", Tool.EDIT_FILE,
        "{p}/scripts/hooks/guard.sh", "deny", "swifty-sandbox or its hooks run",
        unchanged=("{p}/scripts/hooks/guard.sh",), setup=_agent_runs),
    Row("rewrite the script a hook runs through bash -c", Tool.WRITE_FILE,
        "{p}/tools/lint.sh", "deny", "swifty-sandbox or its hooks run",
        unchanged=("{p}/tools/lint.sh",)),
    Row("rewrite the script an MCP server in the settings runs", Tool.WRITE_FILE,
        "{p}/srv/index.js", "deny", "swifty-sandbox or its hooks run",
        unchanged=("{p}/srv/index.js",)),
    Row("a module beside the script a hook runs (first on Python's sys.path)",
        Tool.WRITE_FILE, "{p}/scripts/hooks/json.py", "deny",
        "swifty-sandbox or its hooks run", absent=("{p}/scripts/hooks/json.py",)),
    Row("write a script in Claude Code's hooks folder", Tool.WRITE_FILE,
        "{p}/.claude/hooks/new.sh", "deny", "hook settings",
        absent=("{p}/.claude/hooks/new.sh",)),
    Row("a module the MCP server's script requires from its folder", Tool.WRITE_FILE,
        "{p}/srv/lib/util.js", "deny", "swifty-sandbox or its hooks run",
        absent=("{p}/srv/lib",)),
    Row("write into swifty's own code", Tool.WRITE_FILE, "{pkg}/planted_by_test.py", "deny",
        "swifty-sandbox or its hooks run", absent=("{pkg}/planted_by_test.py",)),
    Row("read through a directory link", Tool.READ_FILE, "{p}/src/lib/id_ed25519", "deny",
        "secrets", setup=_links),
    Row("deny glob on the link's name", Tool.READ_FILE, "{p}/link.key", "deny", "*.key"),
    Row("allow rule only where the kernel lands", Tool.WRITE_FILE, "{p}/out/x.txt",
        BLOCKED, absent=("{h}/outside/x.txt",)),
    Row("the lexical reading leaves the project", Tool.WRITE_FILE, "{p}/in/../../x.txt",
        BLOCKED, absent=("{h}/code/x.txt", "{p}/x.txt")),
    Row("write through a dangling link", Tool.WRITE_FILE, "{p}/dangling", "deny",
        "protected", absent=("{h}/.bash_login",)),
    Row("a symlink loop", Tool.READ_FILE, "{p}/loop/x", "deny", "cannot be looked up"),
    Row("/proc/self/root through a link", Tool.READ_FILE, "{p}/proc{h}/.ssh/id_ed25519",
        "deny", "/proc"),
    Row("another process's environment", Tool.READ_FILE, "/proc/self/environ", "deny",
        "/proc"),
    Row("the server's own stdin", Tool.READ_FILE, "/dev/stdin", "deny", "/proc"),
    Row("a FIFO", Tool.READ_FILE, "{p}/fifo", "deny", "FIFO"),
    Row("a device", Tool.WRITE_FILE, "/dev/null", "deny", "character device"),
    Row("write a hard link of ~/.gitconfig", Tool.WRITE_FILE, "{p}/notes.txt", "deny",
        "hard links", unchanged=("{h}/.gitconfig",)),
    Row("read a hard link of a hidden key", Tool.READ_FILE, "{p}/copy.txt", "deny",
        "hard link"),
    Row("repeated and trailing slashes", Tool.WRITE_FILE, "{p}//.swifty//config.yaml",
        "deny", "protected", absent=("{p}/.swifty/config.yaml",)),
    Row("a trailing slash", Tool.WRITE_FILE, "{p}/.git/hooks/pre-commit/", "deny",
        "protected", absent=("{p}/.git/hooks/pre-commit",)),
    Row("a NUL byte", Tool.WRITE_FILE, "{p}/ok.txt\0/../../.bashrc", BLOCKED,
        unchanged=("{h}/.bashrc", "{p}/ok.txt")),
    Row("a lone surrogate", Tool.WRITE_FILE, "{p}/\ud800.txt", BLOCKED),
    Row("a name too long to look up", Tool.READ_FILE, "{p}/" + "d/" * 2100 + "x", "deny",
        "cannot be looked up"),
    Row("write the repository's commondir (git reads its config from there)",
        Tool.WRITE_FILE, "{p}/.git/commondir", "deny", "git", absent=("{p}/.git/commondir",),
        setup=_git_trust),
    Row("write inside the git directory", Tool.WRITE_FILE, "{p}/.git/info/attributes",
        "deny", "git", absent=("{p}/.git/info/attributes",)),
    Row("write a new gitfile", Tool.WRITE_FILE, "{p}/pkg/.git", "deny", "git",
        absent=("{p}/pkg/.git",)),
    Row("rewrite a submodule's gitfile", Tool.WRITE_FILE, "{p}/vendored/.git", "deny", "git",
        unchanged=("{p}/vendored/.git",)),
    Row("write a bare repository's config", Tool.EDIT_FILE, "{p}/remote.git/config", "deny",
        "git", unchanged=("{p}/remote.git/config",)),
    Row("write a hook in core.hooksPath", Tool.WRITE_FILE, "{p}/githooks/pre-commit", "deny",
        "git", absent=("{p}/githooks/pre-commit",)),
    Row("edit a config file include.path names", Tool.EDIT_FILE, "{p}/team.gitconfig",
        "deny", "git", unchanged=("{p}/team.gitconfig",)),
    Row("the HEAD that completes a planted bare repository", Tool.WRITE_FILE,
        "{p}/halfbare/HEAD", "deny", "git", absent=("{p}/halfbare/HEAD",),
        setup=_half_bare),
    Row("the refs that complete a planted bare repository", Tool.WRITE_FILE,
        "{p}/headless/refs/heads/main", "deny", "git", absent=("{p}/headless/refs",)),
    Row("a commondir beside a HEAD (any repository's config)", Tool.WRITE_FILE,
        "{p}/lonehead/commondir", "deny", "git", absent=("{p}/lonehead/commondir",)),
    Row("control: a file named HEAD where no repository is", Tool.WRITE_FILE,
        "{p}/shared/refs/HEAD", "allow"),
    Row("edit a file the rules make unreadable (an edit shows the old text)",
        Tool.EDIT_FILE, "{p}/secrets.env", "deny", "ReadFile(*.env*)",
        unchanged=("{p}/secrets.env",)),
    Row("write the .env Gemini CLI loads into its environment", Tool.WRITE_FILE, "{p}/.env",
        "deny", "swifty-sandbox or its hooks run", absent=("{p}/.env",)),
    Row("write Gemini CLI's own .env", Tool.WRITE_FILE, "{p}/.gemini/.env", "deny",
        "hook settings", absent=("{p}/.gemini/.env",)),
    # The agents' user config dirs where their variables moved them: protected whole (all
    # of it is read or run at the agent's next start), their credentials hidden.
    Row("write the .env Codex loads at start where CODEX_HOME moved it", Tool.WRITE_FILE,
        "{h}/codex-home/.env", "deny", "protected", absent=("{h}/codex-home/.env",)),
    Row("write a Codex rule where CODEX_HOME moved it", Tool.WRITE_FILE,
        "{h}/codex-home/rules/default.rules", "deny", "protected",
        absent=("{h}/codex-home/rules/default.rules",)),
    Row("edit Codex's AGENTS.md where CODEX_HOME moved it", Tool.EDIT_FILE,
        "{h}/codex-home/AGENTS.md", "deny", "protected",
        unchanged=("{h}/codex-home/AGENTS.md",)),
    Row("read Codex's auth.json where CODEX_HOME moved it", Tool.READ_FILE,
        "{h}/codex-home/auth.json", "deny", "secrets"),
    Row("write a Claude Code plugin where CLAUDE_CONFIG_DIR moved it", Tool.WRITE_FILE,
        "{h}/claude-config/plugins/p/hooks/hooks.json", "deny", "protected",
        absent=("{h}/claude-config/plugins/p/hooks/hooks.json",)),
    Row("write the .env Gemini CLI loads from its moved home", Tool.WRITE_FILE,
        "{h}/gemini-home/.env", "deny", "protected", absent=("{h}/gemini-home/.env",)),
    Row("write Gemini CLI's .env where GEMINI_CLI_HOME moved it", Tool.WRITE_FILE,
        "{h}/gemini-home/.gemini/.env", "deny", "hook settings",
        absent=("{h}/gemini-home/.gemini/.env",)),
    Row("read Gemini CLI's credentials where GEMINI_CLI_HOME moved it", Tool.READ_FILE,
        "{h}/gemini-home/.gemini/oauth_creds.json", "deny", "secrets"),
    # The agents' folders in the project (Gemini CLI's `!{…}` commands, extensions and
    # policies; Codex's agents), at any depth, and the env files above the project.
    Row("write a Gemini CLI custom command", Tool.WRITE_FILE, "{p}/.gemini/commands/t.toml",
        "deny", "hook settings", absent=("{p}/.gemini/commands/t.toml",)),
    Row("write a Gemini CLI .env below the project root", Tool.WRITE_FILE,
        "{p}/pkg/.gemini/.env", "deny", "hook settings", absent=("{p}/pkg/.gemini/.env",)),
    Row("write a Codex agent", Tool.WRITE_FILE, "{p}/.codex/agents/x.toml", "deny",
        "hook settings", absent=("{p}/.codex/agents/x.toml",)),
    Row("write the .env Gemini CLI finds above the project", Tool.WRITE_FILE,
        "{p}/../.env", "deny", "hooks run", absent=("{p}/../.env",)),
    # A local plugin marketplace Claude Code recorded: it reads the plugins in place.
    Row("write a plugin's hooks in a local Claude Code marketplace", Tool.WRITE_FILE,
        "{p}/tools/market/p/hooks/hooks.json", "deny", "hooks run",
        absent=("{p}/tools/market/p/hooks/hooks.json",)),
    Row("edit a file the profile hides", Tool.EDIT_FILE, "{h}/.ssh/id_ed25519", "deny",
        "hidden", unchanged=("{h}/.ssh/id_ed25519",)),
    Row("write ssh's config, which runs ProxyCommand on the host", Tool.WRITE_FILE,
        "{h}/.ssh/config", "deny", "hidden", absent=("{h}/.ssh/config",)),
    Row("write an authorized key through a/b/..", Tool.WRITE_FILE,
        "{p}/a/b/../.ssh/authorized_keys", "deny", "hidden",
        absent=("{h}/.ssh/authorized_keys",)),
    Row("control: read a project file", Tool.READ_FILE, "{p}/ok.txt", "allow"),
    Row("control: write a project file", Tool.WRITE_FILE, "{p}/made.txt", "allow"),
)


def prepare(project: Path, home: Path) -> dict[str, str]:
    """One project and home for the whole table; the environment every surface runs in
    (`project/bin` first on PATH: where a hook's `swifty-sandbox` lookup would land)."""
    (home / ".ssh").mkdir()
    for name in ("id_ed25519", "id_rsa"):
        (home / ".ssh" / name).write_text(SECRET + "\n")
    for name in (".bashrc", ".gitconfig"):
        (home / name).write_text(ORIGINAL)
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("permissions:\n  defaultMode: acceptEdits\n")
    (home / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.key)\n  effect: deny\n- rule: ReadFile(*.env*)\n  effect: deny\n"
        "- rule: WriteFile(out/**)\n  effect: allow\n- rule: EditFile(~/.ssh/**)\n"
        "  effect: allow\n")
    (home / "outside").mkdir()
    (project / "sub" / ".claude").mkdir(parents=True)
    (project / "sub" / ".claude" / "settings.json").write_text(ORIGINAL)
    for row in INVARIANTS:
        row.setup(project, home)
    (home / "claude-config").mkdir()
    (project / "tools" / "market" / "p").mkdir(parents=True)
    (home / "claude-config" / "plugins").mkdir()
    (home / "claude-config" / "plugins" / "known_marketplaces.json").write_text(json.dumps(
        {"local": {"source": {"source": "directory", "path": str(project / "tools/market")},
                   "installLocation": str(project / "tools" / "market")}}))
    (home / "codex-home").mkdir()
    (home / "codex-home" / "AGENTS.md").write_text(ORIGINAL)
    (home / "codex-home" / "auth.json").write_text(SECRET + "\n")
    (home / "gemini-home" / ".gemini").mkdir(parents=True)
    (home / "gemini-home" / ".gemini" / "oauth_creds.json").write_text(SECRET + "\n")
    return {**os.environ, **extra_env(home), "HOME": str(home),
            "PATH": f"{project / 'bin'}:{os.environ['PATH']}"}


def extra_env(home: Path) -> dict[str, str]:
    """Variables that move where the agents read the user's settings."""
    return {"CLAUDE_CONFIG_DIR": str(home / "claude-config"),
            "CODEX_HOME": str(home / "codex-home"),
            "GEMINI_CLI_HOME": str(home / "gemini-home")}


def concrete(row: Row, project: Path, home: Path) -> str:
    return fill(row.path, project, home)


def fill(path: str, project: Path, home: Path) -> str:
    return path.format(p=project, h=home, pkg=PACKAGE)


# -- the surfaces: each answers every row as (effect, text) --------------------------------

Answers = list[tuple[str, str]]


def via_api(project: Path, home: Path, env: dict[str, str]) -> Answers:
    for name in ("PATH", *extra_env(home)):  # restored by the test's monkeypatch
        os.environ[name] = env[name]
    box = Sandbox(project, home=home)
    out = []
    for row in INVARIANTS:
        try:
            decision = box.check(Request.file(row.tool, concrete(row, project, home)))
        except ValueError as e:  # no file can have that name
            out.append(("error", str(e)))
            continue
        out.append((decision.effect.value, decision.reason))
    return out


def via_check(project: Path, home: Path, env: dict[str, str]) -> Answers:
    lines = "".join(json.dumps({"tool": row.tool.value,
                                "path": concrete(row, project, home)}) + "\n"
                    for row in INVARIANTS)
    done = subprocess.run([SCRIPT, "check", "--project", str(project), "--json", "--batch",
                           "-"], input=lines, text=True, capture_output=True, env=env,
                          check=False, timeout=120)
    assert done.returncode in (0, 1, 2, 3), done.stderr  # 2: a line it refused
    decisions = [json.loads(line) for line in done.stdout.splitlines()]
    return [("error", d["error"]["message"]) if "error" in d else (d["effect"], d["reason"])
            for d in decisions]


def via_serve(project: Path, home: Path, env: dict[str, str]) -> Answers:
    proc = subprocess.Popen([SCRIPT, "serve", "--project", str(project)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    out = []
    try:
        for index, row in enumerate(INVARIANTS):
            proc.stdin.write(json.dumps({"id": index, "tool": row.tool.value,
                                         "path": concrete(row, project, home)}) + "\n")
            proc.stdin.flush()
            message = json.loads(proc.stdout.readline())
            if message["type"] == "permission_request":  # nobody here says yes
                out.append(("ask", message["decision"]["reason"]))
                proc.stdin.write(json.dumps({"id": index, "type": "permission_response",
                                             "allow": False, "always": False}) + "\n")
                proc.stdin.flush()
                message = json.loads(proc.stdout.readline())
                continue
            if message["type"] == "error":
                out.append(("error", message["message"]))
                continue
            assert message["type"] == "result", message
            out.append((message["decision"]["effect"], message["decision"]["reason"]))
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
    return out


_CLAUDE_TOOLS = {Tool.READ_FILE: "Read", Tool.WRITE_FILE: "Write", Tool.EDIT_FILE: "Edit"}


def via_hook(project: Path, home: Path, env: dict[str, str]) -> Answers:
    """Each call as Claude Code makes it, with the warm server on as it is by default:
    the first call runs cold and starts a server for this home, the others are served
    by it (`cli/warm.py`), so the table holds on the path a person's hooks take (and
    71 cold starts do not cost a minute of the suite)."""
    warm = {k: v for k, v in env.items() if k not in ("SWIFTY_DAEMON", "PYTEST_CURRENT_TEST")}
    try:
        return _hook_answers(project, home, warm)
    finally:  # the first call started it (for this HOME, the test's own)
        path = child_socket_path(script_python())
        if os.path.exists(path):
            stop_server(path)


def _hook_answers(project: Path, home: Path, env: dict[str, str]) -> Answers:
    out = []
    for row in INVARIANTS:
        payload = {"session_id": "abc123", "transcript_path": str(home / "t.jsonl"),
                   "cwd": str(project), "permission_mode": "acceptEdits",
                   "hook_event_name": "PreToolUse", "tool_name": _CLAUDE_TOOLS[row.tool],
                   "tool_input": {"file_path": concrete(row, project, home),
                                  "content": "x", "old_string": "#", "new_string": "x"},
                   "tool_use_id": "toolu_01ABC123"}
        done = subprocess.run([SCRIPT, "hook", "claude-code"], input=json.dumps(payload),
                              text=True, capture_output=True, env=env, check=False,
                              timeout=60)
        if done.returncode == 2:  # the documented blocking answer: input it refuses
            out.append(("error", done.stderr))
            continue
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        out.append((answer["permissionDecision"], answer["permissionDecisionReason"]))
    return out


def encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def via_mcp(project: Path, home: Path, env: dict[str, str]) -> Answers:
    steps: list[dict[str, Any]] = []
    sent = [encodable(concrete(row, project, home)) for row in INVARIANTS]
    for row, wire in zip(INVARIANTS, sent, strict=True):
        if not wire:  # the SDK's client cannot put a lone surrogate into JSON at all
            continue
        path = concrete(row, project, home)
        args: dict[str, Any] = {"path": path}
        name = {Tool.READ_FILE: "read_file", Tool.WRITE_FILE: "write_file",
                Tool.EDIT_FILE: "edit_file"}[row.tool]
        if row.tool is Tool.WRITE_FILE:
            args["content"] = "planted\n"
        elif row.tool is Tool.EDIT_FILE:
            args |= {"old_string": "#", "new_string": "planted"}
        steps.append({"call": name, "args": args})
    plan = {"project": str(project), "home": str(home), "approve": None, "steps": steps,
            "env": extra_env(home)}
    done = subprocess.run([sys.executable, str(CLIENT)], input=json.dumps(plan), text=True,
                          capture_output=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    results = iter(json.loads(done.stdout)["results"])
    # The MCP server performs the I/O: an error is "not done", whatever the reason.
    out: Answers = []
    for wire in sent:
        result: dict[str, Any] = next(results) if wire else {"is_error": True,
                                                             "text": "not sendable"}
        out.append(("deny" if result["is_error"] else "allow", str(result["text"])))
    return out


SURFACES = {"api": via_api, "check": via_check, "serve": via_serve, "hook": via_hook,
            "mcp": via_mcp}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_every_surface_keeps_every_file_tool_invariant(
        surface: str, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = prepare(project, home)
    before = {path: Path(fill(path, project, home)).read_bytes()
              for row in INVARIANTS for path in row.unchanged}
    for name in ("PATH", *extra_env(home)):  # via_api changes them for its process
        monkeypatch.setenv(name, os.environ.get(name, ""))
    answers = SURFACES[surface](project, home, env)
    assert len(answers) == len(INVARIANTS)
    failures = []
    for row, (effect, text) in zip(INVARIANTS, answers, strict=True):
        wanted = {"allow": {"allow"}, "deny": {"deny"},
                  BLOCKED: {"deny", "ask", "error"}}[row.expect]
        if effect not in wanted:
            failures.append(f"{row.name}: {effect} ({text[:160]})")
        elif row.reason and row.reason not in text:
            failures.append(f"{row.name}: {effect} for another reason ({text[:160]})")
        if SECRET in text:
            failures.append(f"{row.name}: the secret came back")
        for path in row.unchanged:
            if Path(fill(path, project, home)).read_bytes() != before[path]:
                failures.append(f"{row.name}: {path} changed")
        for path in row.absent:
            if os.path.lexists(fill(path, project, home)):
                failures.append(f"{row.name}: {path} was created")
    assert not failures, "\n".join(failures)
    if surface == "mcp":  # the controls were really done
        assert (project / "made.txt").read_text() == "planted\n"
        assert answers[[r.name for r in INVARIANTS].index("control: read a project file")][1] \
            == "fine\n"
