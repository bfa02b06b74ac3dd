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
