"""The session log's writer and reader (sandbox/agents/sessionlog.py): where it lies,
modes, one line per record under concurrency, rotation, scrubbing by the environment's
rule, links and foreign files refused, the off switch, the record's schema."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.policy.paths import session_log_dir
from swifty_sandbox.sandbox.agents import sessionlog
from swifty_sandbox.sandbox.spec.compiler import SecretRule, scrub_env

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "log-record.schema.json"


def log_of(project: Path, home: Path) -> Path:
    return sessionlog.log_file(Path(os.path.realpath(project)), Path(os.path.realpath(home)))


def records(project: Path, home: Path) -> list[dict[str, object]]:
    return list(sessionlog.read(log_of(project, home)))


def test_location_is_per_project_in_the_state_dir(project: Path, home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert session_log_dir(home, {}) == home / ".local" / "state" / "swifty-sandbox"
    assert session_log_dir(home, {"XDG_STATE_HOME": "/srv/state/"}) == \
        Path("/srv/state/swifty-sandbox")
    # Relative (the XDG spec ignores it) or with glob characters (it is also a protected
    # pattern, which must name exactly this directory): the default.
    for ignored in ("state", "/srv/st*te", "/srv/[a]"):
        assert session_log_dir(home, {"XDG_STATE_HOME": ignored}) == \
            home / ".local" / "state" / "swifty-sandbox"
    other = project.parent / "other"
    (other / ".git").mkdir(parents=True)
    odd = project.parent / "we\nird $(x) name"
    (odd / ".git").mkdir(parents=True)
    names = {log_of(p, home).name for p in (project, other, odd)}
    assert len(names) == 3  # one file per project, keyed by the digest
    assert all(n.endswith(".jsonl") and "\n" not in n and "$" not in n and " " not in n
               for n in names)


def test_modes_and_one_line_per_record(box_for: object, project: Path, home: Path) -> None:
    box = Sandbox(project, home=home)
    box.check("ls -la")
    box.check(["echo", "two\nlines {\"v\":1,\"kind\":\"forged\"}"])
    path = log_of(project, home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2  # a newline in a command stays inside its JSON string
    second = json.loads(lines[1])
    assert second["request"]["argv"][1].startswith("two\nlines")
    assert [r["kind"] for r in records(project, home)] == ["decision", "decision"]


def test_a_loosened_mode_is_put_back(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home)
    box.check("true")
    path = log_of(project, home)
    os.chmod(path, 0o644)
    os.chmod(path.parent, 0o755)
    box.check("true")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def _hammer(path: str, writer: int, count: int) -> None:
    for i in range(count):
        line = json.dumps({"v": 1, "time": "t", "writer": writer, "i": i,
                           "pad": "x" * (3000 + writer * 7)}) + "\n"
        sessionlog.append(Path(path), line.encode())


def test_concurrent_writers_never_interleave(home: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Four processes append 200 records of ~3 KiB each at once, rotating as they go:
    every line parses and every record is there once, in some file (one write per
    record and the rotation under flock)."""
    monkeypatch.setattr(sessionlog, "LOG_BYTES", 700_000)  # ~2.4 MB: three rotations
    path = home / "state" / "swifty-sandbox" / "p.jsonl"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_hammer, args=(str(path), w, 200)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    assert (path.parent / "p.jsonl.3").exists()
    seen = [json.loads(line) for name in sessionlog.files(path)
            for line in name.read_bytes().splitlines()]
    assert sorted((r["writer"], r["i"]) for r in seen) == \
        [(w, i) for w in range(4) for i in range(200)]


def test_rotation_keeps_the_newest_within_the_cap(home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessionlog, "LOG_BYTES", 10_000)
    path = home / "state" / "swifty-sandbox" / "p.jsonl"
    for i in range(600):
        line = json.dumps({"v": 1, "time": f"{i:05d}", "pad": "y" * 100}) + "\n"
        sessionlog.append(path, line.encode())
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == ["p.jsonl", "p.jsonl.1", "p.jsonl.2", "p.jsonl.3"]
    assert all(p.stat().st_size <= 10_000 for p in path.parent.iterdir())
    stamps = [str(r["time"]) for r in sessionlog.read(path)]
    assert stamps == sorted(stamps) and stamps[-1] == "00599"  # oldest first, newest kept
    assert stamps[0] != "00000"  # the oldest were dropped


def test_follow_survives_rotation(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessionlog, "LOG_BYTES", 2_000)
    path = home / "state" / "swifty-sandbox" / "p.jsonl"
    sessionlog.append(path, b'{"v":1,"time":"before"}\n')
    seen: list[object] = []
    follower = sessionlog.follow(path, poll=0.02)

    def read() -> None:
        for entry in follower:
            seen.append(entry["time"])
            if len(seen) == 60:
                return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    time.sleep(0.2)  # following from the end: "before" is not shown
    for i in range(60):
        sessionlog.append(path, (json.dumps({"v": 1, "time": f"{i:03d}", "p": "z" * 80})
                                 + "\n").encode())
        time.sleep(0.005)
    thread.join(20)
    follower.close()
    assert seen == [f"{i:03d}" for i in range(60)]  # several rotations, nothing lost
    assert (path.parent / "p.jsonl.1").exists()


def test_links_and_foreign_files_are_refused(home: Path) -> None:
    directory = home / "state" / "swifty-sandbox"
    directory.mkdir(parents=True)
    target = home / "elsewhere.txt"
    target.write_text("the user's file\n")
    (directory / "p.jsonl").symlink_to(target)
    with pytest.raises(OSError):
        sessionlog.append(directory / "p.jsonl", b'{"v":1}\n')
    assert target.read_text() == "the user's file\n"
    (directory / "p.jsonl").unlink()
    os.mkfifo(directory / "p.jsonl")  # would block an opener for write forever
    with pytest.raises(OSError):
        sessionlog.append(directory / "p.jsonl", b'{"v":1}\n')
    # the directory itself a link: refused too
    moved = home / "state" / "real"
    directory.rename(moved)
    directory.symlink_to(moved)
    with pytest.raises(OSError):
        sessionlog.append(directory / "q.jsonl", b'{"v":1}\n')
    assert not (moved / "q.jsonl").exists()


def test_an_unwritable_log_does_not_fail_the_command(project: Path, home: Path,
                                                     capfd: pytest.CaptureFixture[str]
                                                     ) -> None:
    state = home / ".local" / "state"
    state.mkdir(parents=True)
    (state / "swifty-sandbox").write_text("not a directory\n")
    box = Sandbox(project, home=home)
    assert box.check("true").effect.value == "allow"
    box.check("true")
    err = capfd.readouterr().err
    assert err.count("cannot write the session log") == 1  # said once, not per command


RULE = SecretRule(("*TOKEN*", "*KEY*", "*PASSWORD*", "*SECRET*"), ("KEYTIMEOUT",))


@pytest.mark.parametrize(("text", "shown", "hidden"), [
    ("GITHUB_TOKEN=ghp_abc123 git push", "GITHUB_TOKEN=*** git push", "ghp_abc123"),
    ("export API_KEY='s3 cr3t' && make", "export API_KEY=*** && make", "s3 cr3t"),
    ('env DB_PASSWORD="p\\"w" ./run', "env DB_PASSWORD=*** ./run", 'p\\"w'),
    ("deploy --api-key=abcdef", "deploy --api-key=***", "abcdef"),
    ("git clone https://bob:hunter2@example.com/r.git",
     "git clone https://bob:***@example.com/r.git", "hunter2"),
    ("curl https://x.org/a@b?p=1", "curl https://x.org/a@b?p=1", None),  # no userinfo
    ("KEYTIMEOUT=1 zsh", "KEYTIMEOUT=1 zsh", None),  # kept, as the environment keeps it
    ("PATH=/bin:$PATH make CC=gcc", "PATH=/bin:$PATH make CC=gcc", None),
    ("echo a=b; MY_SECRET=x;TOKEN=y", "echo a=b; MY_SECRET=***;TOKEN=***", None),
])
def test_scrubbing_follows_the_environment_rule(text: str, shown: str,
                                                hidden: str | None) -> None:
    assert sessionlog.scrub(text, RULE) == shown
    if hidden is not None:
        assert hidden not in sessionlog.scrub(text, RULE)


def test_scrubbing_is_the_rule_the_environment_uses(project: Path, home: Path) -> None:
    """One rule: a variable scrub_env drops is masked in a command; one it keeps is not."""
    box = Sandbox(project, home=home)
    spec = box.spec()
    env = {"STRIPE_SECRET_KEY": "sk_live_1", "EDITOR": "vim", "KEYTIMEOUT": "1",
           "DATABASE_URL": "postgres://u:pw@db/x"}
    kept = scrub_env(env, spec)
    rule = SecretRule(spec.env_drop, spec.env_keep)
    for name, value in env.items():
        masked = sessionlog.scrub(f"{name}={value} true", rule) != f"{name}={value} true"
        assert masked == (name not in kept), name


def test_runs_record_the_result_but_not_the_output(project: Path, home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWIFTY_BACKEND", "bwrap")
    box = Sandbox(project, home=home)
    box.run("echo OUTPUT-NOT-LOGGED; AWS_SECRET_ACCESS_KEY=wJalr true; exit 3")
    box.run("rm -rf /")
    run, denied = records(project, home)
    assert run["kind"] == "run" and run["exit_code"] == 3 and run["surface"] == "api"
    assert isinstance(run["duration_ms"], int)
    text = log_of(project, home).read_text()
    assert "OUTPUT-NOT-LOGGED" in text  # the command itself, as asked …
    assert "stdout" not in run and "stderr" not in run  # … never its output
    assert "wJalr" not in text
    assert denied["decision"]["effect"] == "deny" and denied["exit_code"] == 126  # type: ignore[index]
    assert denied["decision"]["category"] == "recursive-delete"  # type: ignore[index]


def test_off_switch_and_a_committed_file_cannot_use_it(project: Path, home: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "config.yaml").write_text("log:\n  enabled: false\n")
    box = Sandbox(project, home=home)
    assert any("log.enabled" in w for w in box.warnings)
    box.check("true")
    assert len(records(project, home)) == 1  # the repository's `false` was ignored
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("log:\n  enabled: false\n")
    Sandbox(project, home=home).check("true")
    assert len(records(project, home)) == 1  # the user's own `false` holds


def test_every_record_matches_the_schema(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home)
    box.check("git status")
    box.check(["ls", "-l"])
    box.run("git push --force")
    from swifty_sandbox import Request, Tool

    box.check(Request.file(Tool.READ_FILE, str(home / ".ssh" / "id_rsa")))
    schema = json.loads(SCHEMA.read_text())
    found = records(project, home)
    assert len(found) == 4
    for entry in found:
        jsonschema.validate(entry, schema)


@pytest.mark.parametrize("xdg", [False, True])
def test_the_file_tools_neither_write_nor_read_the_log(project: Path, home: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       xdg: bool) -> None:
    """The agent's own file tools run outside the sandbox: the same protected and hidden
    entries refuse them (a WriteFile forging a record, a ReadFile reading the others)."""
    from swifty_sandbox import Request, Tool

    if xdg:
        monkeypatch.setenv("XDG_STATE_HOME", str(project / "state"))
    box = Sandbox(project, home=home)
    box.check("true")
    path = str(log_of(project, home))
    assert path.startswith(str(project if xdg else home))
    for tool in (Tool.WRITE_FILE, Tool.EDIT_FILE, Tool.READ_FILE):
        assert box.check(Request.file(tool, path)).effect.value == "deny", tool
    control = Request.file(Tool.READ_FILE, str(project / "README"))
    assert box.check(control).effect.value == "allow"


def test_a_process_recording_for_many_projects_holds_few_descriptors(
        outside_temp: Path, home: Path) -> None:
    def open_count() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_count()
    for i in range(20):
        project = outside_temp / f"p{i}"
        (project / ".git").mkdir(parents=True)
        Sandbox(project, home=home).check("true")
    assert open_count() - before <= 2 * sessionlog.HELD
    assert len(list(session_log_dir(home, {}).iterdir())) == 20


@pytest.mark.bwrap
@pytest.mark.unprivileged
def test_a_runs_violations_are_recorded(project: Path, home: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """What `RunResult.as_json()` carries is recorded as it is: a refused write outside
    the roots, reported by the run, is in its record (a script, so that the policy's
    analysis does not refuse it first)."""
    monkeypatch.setenv("SWIFTY_BACKEND", "bwrap")
    (project / "w.sh").write_text("echo x >> ~/.bashrc\n")
    result = Sandbox(project, home=home).run(["bash", "w.sh"])
    assert result.as_json().get("violations"), result
    (entry,) = records(project, home)
    assert entry["violations"] == json.loads(json.dumps(result.as_json()["violations"]))
    assert str(home / ".bashrc") in json.dumps(entry["violations"])
    jsonschema.validate(entry, json.loads(SCHEMA.read_text()))
