"""The agents' user config dirs where their variables put them (`CODEX_HOME`,
`CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME`), inside a writable root: everything there is
read or run at the agent's next start, outside any sandbox (Codex loads
`$CODEX_HOME/.env` over the variables already set, `BASH_ENV` and `PATH` included:
tests/agents shows it with the real CLI), so a confined command plants nothing there
and reads none of the credentials. Real bwrap; each attack beside its unconfined
control, judged from outside."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox.agents import RunResult

pytestmark = pytest.mark.linux

Attack = Callable[..., RunResult]
Runner = Callable[..., RunResult]

# (variable, the dir it names below ~/cfg, the agent's config dir in it, files planted
# there: relative to the config dir, or to the agent's home with Gemini's `~`)
PLANTS = [
    ("CODEX_HOME", "codex", "", (".env", "rules/default.rules", "AGENTS.md",
                                 "skills/x/SKILL.md", "config.toml")),
    ("CLAUDE_CONFIG_DIR", "claude", "", ("CLAUDE.md", "plugins/p/hooks/hooks.json",
                                         "skills/x/SKILL.md", ".claude.json")),
    ("GEMINI_CLI_HOME", "gemini-home", ".gemini", (".gemini/.env", ".env",
                                                   ".gemini/extensions/x/gemini-extension.json",
                                                   ".gemini/GEMINI.md")),
]


def _writable_cfg(home: Path) -> Path:
    """The person's config gives the command `~/cfg`, where the agents' dirs are."""
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  writable: ['~/cfg']\n")
    return home / "cfg"


@pytest.mark.parametrize(("var", "name", "folder", "plants"), PLANTS,
                         ids=[p[0] for p in PLANTS])
def test_nothing_is_planted_in_a_moved_agent_config_dir(
        attack: Attack, home: Path, monkeypatch: pytest.MonkeyPatch, var: str, name: str,
        folder: str, plants: tuple[str, ...]) -> None:
    base = _writable_cfg(home) / name
    (base / folder).mkdir(parents=True)
    (base / folder / "settings.json").write_text("{}\n")
    monkeypatch.setenv(var, str(base))
    for plant in plants:
        target = base / plant
        existing = target.parent.exists()

        def reset(target: Path = target, existing: bool = existing,
                  plant: str = plant) -> None:
            if target.exists():
                target.unlink()
            if not existing:
                shutil.rmtree(base / Path(plant).parts[0], ignore_errors=True)

        # Refused under bwrap; written and put back under Landlock (*repaired*): from
        # outside, nothing is left either way.
        attack(f"mkdir -p {target.parent} && echo BASH_ENV=/tmp/x >> {target}",
               target.exists, reset)


def test_the_writable_root_beside_a_moved_config_dir_stays_writable(
        confined: Runner, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control of the one above: a file beside the moved dir is written."""
    base = _writable_cfg(home) / "codex"
    base.mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(base))
    result = confined("echo ok > ~/cfg/beside.txt && echo written")
    assert "written" in result.stdout and (home / "cfg" / "beside.txt").exists(), result


@pytest.mark.parametrize("where", ["moved", "default"])
@pytest.mark.parametrize("secret", ["auth.json", ".env"])
def test_codex_credentials_are_hidden_where_codex_reads_them(
        confined: Runner, unconfined: Runner, home: Path, monkeypatch: pytest.MonkeyPatch,
        where: str, secret: str) -> None:
    """`auth.json` and the `.env` Codex loads hold its API key: unreadable inside, in
    the default `~/.codex` and where `CODEX_HOME` moved it."""
    base = home / ".codex" if where == "default" else _writable_cfg(home) / "codex"
    base.mkdir(parents=True)
    if where == "moved":
        monkeypatch.setenv("CODEX_HOME", str(base))
    (base / secret).write_text("OPENAI_API_KEY=sk-CODEX-SECRET\n")
    command = f"cat {base / secret}"
    assert "sk-CODEX-SECRET" in unconfined(command).stdout  # the control
    result = confined(command)
    assert "sk-CODEX-SECRET" not in result.stdout + result.stderr, result


# -- the agents' folders in the project, at any depth, and the env files above it -------

@pytest.mark.parametrize("plant", [".gemini/commands/deploy.toml",
                                   ".gemini/extensions/x/gemini-extension.json",
                                   ".gemini/policies/allow.toml", ".codex/agents/x.toml",
                                   ".codex/skills/x/SKILL.md"])
def test_nothing_is_planted_in_a_projects_agent_folder(attack: Attack, project: Path,
                                                       plant: str) -> None:
    """Gemini CLI runs a custom command's `!{…}` in a shell on the host, starts a
    workspace extension's MCP servers, takes its policies; Codex reads its agents and
    skills there: the whole folder is the agent's, not the project's."""
    (project / Path(plant).parts[0]).mkdir()
    (project / Path(plant).parts[0] / "settings.json").write_text("{}\n")
    target = project / plant
    attack(f"mkdir -p {target.parent} && echo 'prompt = \"!{{touch /tmp/x}}\"' > {target}",
           target.exists, _reset_below(project / Path(plant).parts[0], target))


def _reset_below(folder: Path, target: Path) -> Callable[[], None]:
    def reset() -> None:
        for path in [p for p in folder.rglob("*") if p.is_file() and p == target]:
            path.unlink()
        for directory in sorted((p for p in folder.rglob("*") if p.is_dir()),
                                key=lambda p: -len(p.parts)):
            if not any(directory.iterdir()):
                directory.rmdir()
    return reset


@pytest.mark.parametrize("folder", [".gemini", ".codex", ".claude"])
@pytest.mark.parametrize("exists", [True, False])
def test_an_agent_folder_below_the_project_root_is_the_agents(
        attack: Attack, project: Path, folder: str, exists: bool) -> None:
    """Gemini CLI started in `pkg/` reads `pkg/.gemini/settings.json` (hooks run on the
    host) and `pkg/.gemini/.env`; Codex each `.codex/config.toml` from the project root
    to where it starts: a nested one is kept read-only, one a command makes is moved
    aside after the run (kept there, named)."""
    nested = project / "pkg" / folder
    name = "config.toml" if folder == ".codex" else "settings.json"
    target = nested / (name if exists else ".env")
    if exists:
        nested.mkdir(parents=True)
        target.write_text("{}\n")
    else:
        (project / "pkg").mkdir()

    def reset() -> None:
        if exists:
            target.write_text("{}\n")
        elif nested.exists():
            shutil.rmtree(nested)

    def planted() -> bool:
        return target.exists() and "BASH_ENV" in target.read_text()

    result = attack(f"mkdir -p {nested} && echo BASH_ENV=/tmp/x >> {target}", planted,
                    reset)
    if not exists:
        assert any(p.name.startswith(".swifty-blocked-") for p in nested.parent.iterdir()), \
            result.stderr


@pytest.mark.parametrize("name", [".env", ".gemini/.env"])
def test_the_env_files_above_the_project_are_kept(
        attack: Attack, home: Path, project: Path, name: str) -> None:
    """Gemini CLI looks for `.gemini/.env` and `.env` in the folder it starts in and
    each one above it: where a writable root holds the project's parent (`~/code`), a
    command plants none there for a Gemini user (`~/.gemini` exists)."""
    (home / ".gemini").mkdir()
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  writable: ['~/code']\n")
    target = project.parent / name
    attack(f"mkdir -p {target.parent} && echo BASH_ENV=/tmp/x > {target}", target.exists,
           lambda: target.unlink(missing_ok=True))


def test_beside_the_env_files_above_the_project_is_writable(
        confined: Runner, home: Path, project: Path) -> None:
    """The control of the one above: the writable parent takes other files."""
    (home / ".gemini").mkdir()
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  writable: ['~/code']\n")
    result = confined(f"echo ok > {project.parent / 'notes.txt'} && echo written")
    assert "written" in result.stdout and (project.parent / "notes.txt").exists(), result


# -- Claude Code's local plugin marketplaces ---------------------------------------------

PLUGIN_HOOKS = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", ' \
    '"command": "touch /tmp/pwned"}]}]}}'


def _marketplace(project: Path) -> Path:
    """A marketplace folder in the project with one plugin whose hooks Claude Code runs."""
    market = project / "tools" / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(
        '{"name": "local", "owner": {"name": "me"}, "plugins": [{"name": "p", '
        '"source": "./p"}]}')
    (market / "p" / "hooks").mkdir(parents=True)
    (market / "p" / "hooks" / "hooks.json").write_text('{"hooks": {}}\n')
    return market


@pytest.mark.parametrize("declared", ["settings", "known_marketplaces.json"])
@pytest.mark.parametrize("plant", ["p/hooks/hooks.json", "p/.mcp.json", "q/hooks/hooks.json"])
def test_a_local_plugin_marketplace_is_kept_whole(
        attack: Attack, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch,
        declared: str, plant: str) -> None:
    """A marketplace the user's settings declare as a local folder (or one Claude Code
    recorded in `plugins/known_marketplaces.json`, which stays after the declaration
    is gone): Claude Code reads its plugins in place at every start, and their hooks
    run on the host (tests/agents shows it with the real CLI). In the project it is an
    ordinary folder a command could write: kept read-only whole."""
    market = _marketplace(project)
    config = home / "claude-config"
    (config / "plugins").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    source = f'{{"source": "directory", "path": "{market}"}}'
    if declared == "settings":
        (config / "settings.json").write_text(
            f'{{"extraKnownMarketplaces": {{"local": {{"source": {source}}}}}}}')
    else:
        (config / "plugins" / "known_marketplaces.json").write_text(
            f'{{"local": {{"source": {source}, "installLocation": "{market}"}}}}')
    target = market / plant
    before = target.read_text() if target.exists() else None

    def reset() -> None:
        if before is not None:
            target.write_text(before)
        else:
            shutil.rmtree(market / Path(plant).parts[0], ignore_errors=True)

    attack(f"mkdir -p {target.parent} && echo '{PLUGIN_HOOKS}' > {target}",
           lambda: target.exists() and "pwned" in target.read_text(), reset)


def test_a_folder_no_settings_name_stays_writable(confined: Runner, project: Path) -> None:
    """The control of the one above: the same folder, named by no settings."""
    market = _marketplace(project)
    result = confined(f"echo '{PLUGIN_HOOKS}' > {market}/p/hooks/hooks.json && echo ok")
    assert "ok" in result.stdout and "pwned" in (market / "p/hooks/hooks.json").read_text()
