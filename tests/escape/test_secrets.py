"""Secrets stay unreadable: the profile's deny-read list, ReadFile deny rules, env."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox.sandbox import RunResult

Runner = Callable[..., RunResult]
SECRET = "AKIA-very-secret-4242"


@pytest.fixture
def secret_attack(confined: Runner, unconfined: Runner) -> Callable[[str], RunResult]:
    def run(command: str) -> RunResult:
        control = unconfined(command)
        assert SECRET in control.stdout, f"control did not read the secret: {control}"
        result = confined(command)
        assert SECRET not in result.stdout + result.stderr, f"ESCAPE: {result}"
        return result

    return run


@pytest.mark.parametrize("relative", [".ssh/id_ed25519", ".aws/credentials", ".netrc",
                                      ".docker/config.json", ".config/gcloud/creds.json"])
def test_home_secrets(secret_attack: Callable[[str], RunResult], home: Path,
                      relative: str) -> None:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SECRET + "\n")
    secret_attack(f"cat ~/{relative}; grep -r {SECRET} ~/{relative.split('/')[0]}")


def test_secret_through_symlink_in_project(secret_attack: Callable[[str], RunResult],
                                           home: Path, project: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (project / "key").symlink_to(home / ".ssh" / "id_rsa")
    secret_attack("cat key")


def test_token_in_environment(secret_attack: Callable[[str], RunResult],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("MY_API_KEY", SECRET)
    secret_attack("echo $GITHUB_TOKEN; env | grep -i key")


def test_project_env_with_read_deny_rule(secret_attack: Callable[[str], RunResult],
                                         project: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: ReadFile(*.env*)\n  effect: deny\n")
    (project / ".env").write_text(f"TOKEN={SECRET}\n")
    (project / "config" / "deep").mkdir(parents=True)
    (project / "config" / "deep" / "prod.env").write_text(f"TOKEN={SECRET}\n")
    secret_attack("cat .env config/deep/prod.env")
    secret_attack("grep -r TOKEN . ")


def test_kept_variables_stay(confined: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH_EXTRA_OK", "visible")
    monkeypatch.setenv("KEYTIMEOUT", "1")
    out = confined("echo $PATH_EXTRA_OK $KEYTIMEOUT").stdout.split()
    assert out == ["visible", "1"]
