"""Secrets stay unreadable: the profile's deny-read list, ReadFile deny rules, env."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy import Request, Tool
from swifty_sandbox.sandbox.agents import RunResult

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


@pytest.mark.parametrize("name", ["GH_PAT", "APP_JWT", "DB_PASS", "MYSQL_PWD",
                                  "SENTRY_DSN", "GPG_PASSPHRASE", "REGISTRY_CREDS"])
def test_more_secret_names_in_environment(secret_attack: Callable[[str], RunResult],
                                          monkeypatch: pytest.MonkeyPatch,
                                          name: str) -> None:
    monkeypatch.setenv(name, SECRET)
    secret_attack("env")


def test_url_with_password_in_environment(secret_attack: Callable[[str], RunResult],
                                          confined: Runner,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", f"postgres://app:{SECRET}@db:5432/app")
    monkeypatch.setenv("UPSTREAM", f"https://x-access-token:{SECRET}@github.com/o/r")
    secret_attack("env")
    out = confined("echo \"$PWD|$OLDPWD\"", cwd=None).stdout  # PWD is not a secret
    assert out.split("|")[0].strip() != ""


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


# The credential stores developers have (issue 8, class 8), each a file the confined
# command tries to read; the ones inside toolchain directories stand beside files that
# must stay readable.
CREDENTIAL_FILES = [
    ".config/git/credentials", ".docker/key.pem", ".docker/ca.pem",
    ".docker/contexts/tls/0123abcd/docker/key.pem", ".docker/machine/certs/key.pem",
    ".cargo/credentials", ".cargo/credentials.toml", ".config/containers/auth.json",
    ".claude/.credentials.json", ".claude.json", ".codex/auth.json",
    ".config/gh/hosts.yml", ".gemini/oauth_creds.json", ".config/cursor/auth.json",
    ".config/github-copilot/apps.json", ".pgpass", ".my.cnf", ".mylogin.cnf",
    ".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history",
    ".psql_history", ".mysql_history", ".node_repl_history", ".m2/settings.xml",
    ".m2/settings-security.xml", ".gradle/gradle.properties", ".config/rclone/rclone.conf",
    ".s3cfg", ".oci/config", ".config/doctl/config.yaml", ".gem/credentials",
]
TOOLCHAIN_NEIGHBOURS = [".cargo/bin/cargo-tool", ".cargo/config.toml",
                        ".gradle/caches/modules.bin", ".m2/repository/a/b.pom",
                        ".docker/cli-plugins/docker-buildx", ".config/git/config",
                        ".claude/settings.json", ".local/share/fish/functions/f.fish"]


def _plant(home: Path, relatives: list[str], tag: str) -> dict[str, str]:
    marks = {}
    for i, relative in enumerate(relatives):
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        marks[relative] = f"{tag}-{i}-{uuid.uuid4().hex[:8]}"
        path.write_text(marks[relative] + "\n")
    return marks


def test_credential_stores(confined: Runner, unconfined: Runner, home: Path,
                           project: Path) -> None:
    secrets = _plant(home, CREDENTIAL_FILES, "secret")
    neighbours = _plant(home, TOOLCHAIN_NEIGHBOURS, "tool")
    command = " ".join(f"cat ~/{r} 2>/dev/null;" for r in [*secrets, *neighbours])
    control = unconfined(command).stdout
    assert all(m in control for m in (*secrets.values(), *neighbours.values())), control
    result = confined(command)
    leaked = [r for r, mark in secrets.items() if mark in result.stdout + result.stderr]
    assert leaked == [], f"ESCAPE: readable confined: {leaked}"
    missing = [r for r, mark in neighbours.items() if mark not in result.stdout]
    assert missing == [], f"toolchain files hidden too: {missing}"
    # `check --tool ReadFile` says the same as what a confined cat could read.
    box = Sandbox(project, home=home)
    for relative in secrets:
        decision = box.check(Request.file(Tool.READ_FILE, home / relative))
        assert decision.effect.value == "deny", (relative, decision)
    for relative in neighbours:
        decision = box.check(Request.file(Tool.READ_FILE, home / relative))
        assert decision.effect.value != "deny", (relative, decision)  # ask: outside


@pytest.fixture
def kerberos_ticket() -> Iterator[Path]:
    path = Path("/tmp") / f"krb5cc_{os.getuid()}_swifty{uuid.uuid4().hex[:6]}"
    path.write_text(SECRET + "\n")
    path.chmod(0o600)
    yield path
    path.unlink()


@pytest.mark.linux  # Linux keeps ticket caches in /tmp
def test_kerberos_ticket_cache_in_tmp(secret_attack: Callable[[str], RunResult],
                                      kerberos_ticket: Path, project: Path,
                                      home: Path) -> None:
    secret_attack(f"cat {kerberos_ticket}; cat /tmp/krb5cc_*")
    decision = Sandbox(project, home=home).check(Request.file(Tool.READ_FILE,
                                                              kerberos_ticket))
    assert decision.effect.value == "deny"


@pytest.mark.linux  # /etc/shadow
@pytest.mark.parametrize("path", ["/etc/shadow", "/etc/gshadow"])
def test_password_hashes(confined: Runner, unconfined: Runner, path: str) -> None:
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    command = f"cat {path} | head -c 200 | wc -c"
    readable = int(unconfined(command).stdout) > 0
    if not readable and os.getuid() != 0:
        assert int(confined(command).stdout) == 0
        pytest.skip(f"{path} is unreadable to this user even unconfined")
    assert readable, "control: root cannot read it"
    assert int(confined(command).stdout) == 0, "ESCAPE"


@pytest.fixture
def home_outside_root() -> Iterator[Path]:
    """A home and project that are not under root's home (the usual test homes are
    under the real user's, /root when root). Not in a temp dir: those are writable."""
    base = Path(tempfile.mkdtemp(prefix="swifty-test-", dir="/home"
                                 if os.access("/home", os.W_OK) else "/var/lib"))
    home = base / "home"
    (home / "code" / "app" / ".git").mkdir(parents=True)
    yield home
    shutil.rmtree(base)


@pytest.mark.linux  # root's home is /root
# serial: the file planted in the real /root is hidden by every root run meanwhile, and
# gone when it is removed (bwrap cannot then make its mount point: 125 for that run)
@pytest.mark.serial
@pytest.mark.skipif(os.getuid() != 0, reason="root's home is unreadable to other users")
def test_root_home_secrets_hidden_from_root(home_outside_root: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Root with another HOME: root's own credential files are hidden like the user's,
    while the rest of /root (toolchains, a project) stays usable."""
    monkeypatch.setenv("HOME", str(home_outside_root))
    project = home_outside_root / "code" / "app"
    candidates = [Path("/root") / name for name in (".pgpass", ".psql_history", ".s3cfg",
                                                     ".mysql_history", ".my.cnf")]
    planted = next((p for p in candidates if not os.path.lexists(p)), None)
    if planted is None:
        pytest.skip("root already has every candidate file; none is planted over")
    planted.write_text(SECRET)
    try:
        command = ["/bin/cat", str(planted)]  # the venv may live under /root: not Python
        control = Sandbox(project, home=home_outside_root, sandbox_mode="off",
                          mode="bypassPermissions").run(command)
        assert SECRET in control.stdout, control
        box = Sandbox(project, home=home_outside_root)
        result = box.run(command)
        assert result.exit_code != 125, result
        assert SECRET not in result.stdout + result.stderr, f"ESCAPE: {result}"
        if result.backend == "bwrap":
            # Read as an empty file (its placeholder, placeholders.py: /root/.pgpass is
            # in no work tree), and the read reported as the kernel saw it.
            assert result.exit_code == 0 and result.stdout == "", result
            assert any(v["kind"] == "hidden" and v["op"] == "read"
                       and v["path"] == str(planted) and v["seen"] == "kernel"
                       for v in result.violations), result
        else:  # Landlock: refused (no mounts, so no placeholder)
            assert result.exit_code != 0, result
        assert box.check(Request.file(Tool.READ_FILE, planted)).effect.value == "deny"
    finally:
        planted.unlink()


@pytest.mark.linux  # root's home is /root
@pytest.mark.skipif(os.getuid() != 0, reason="only root can keep a project under /root")
def test_project_under_root_home_stays_usable(project: Path, home: Path) -> None:
    """A project under root's home stays usable when root runs with a HOME elsewhere
    (the usual test project as root is under /root/.cache)."""
    if not str(project).startswith("/root/"):
        pytest.skip("the test project is not under /root here")
    (project / "main.txt").write_text("hello\n")
    with tempfile.TemporaryDirectory(dir="/var/lib") as elsewhere:
        box = Sandbox(project, home=Path(elsewhere))
        result = box.run(["/bin/sh", "-c", "cat main.txt && echo more >> main.txt"])
        assert result.exit_code == 0 and result.stdout == "hello\n", result
        assert (project / "main.txt").read_text() == "hello\nmore\n"


@pytest.mark.parametrize(("rules", "secret"), [
    (["ReadFile(~/.ssh/keys)"], ".ssh/keys/id_work"),  # inside the profile's ~/.ssh
    (["ReadFile(~/.ssh/keys/id_work)"], ".ssh/keys/id_work"),  # a file there
    (["ReadFile(~/vault/keys)", "ReadFile(~/vault)"], "vault/keys/id_work"),  # inner first
    (["ReadFile(~/vault)", "ReadFile(~/vault/keys)", "ReadFile(~/vault/keys/id_work)"],
     "vault/keys/id_work"),
    (["ReadFile(~/.cache)"], ".cache/x/id_work"),  # around swifty's own hidden caches
])
def test_a_hidden_path_inside_a_hidden_directory(secret_attack: Callable[[str], RunResult],
                                                 home: Path, rules: list[str], secret: str
                                                 ) -> None:
    """A rule naming what another rule (or the profile) hides already, by its folder:
    the run goes on, everything below the outer folder hidden. Every run used to be
    refused (125: bwrap could not make the inner mount point in the empty stand-in)."""
    (home / secret).parent.mkdir(parents=True, exist_ok=True)
    (home / secret).write_text(SECRET + "\n")
    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "permissions.yaml").write_text(
        "".join(f"- rule: {rule}\n  effect: deny\n" for rule in rules))
    result = secret_attack(f"cat ~/{secret} 2>/dev/null; echo ran")
    assert result.stdout.strip().endswith("ran"), result
