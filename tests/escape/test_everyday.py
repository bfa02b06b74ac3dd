"""Confinement that breaks everyday work is a bug too: these must work confined."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.sandbox.agents import RunResult

Runner = Callable[..., RunResult]


def ok(result: RunResult) -> RunResult:
    assert result.exit_code == 0, result
    return result


def test_git_init_commit_and_log(confined: Runner, project: Path) -> None:
    shutil.rmtree(project / ".git")
    ok(confined("git init -q && git config user.email a@b.c && git config user.name A"))
    (project / "a.txt").write_text("hello\n")
    ok(confined("git add a.txt && git commit -qm first && echo more >> a.txt && "
                "git commit -qam second"))
    log = ok(confined("git log --oneline | wc -l")).stdout.strip()
    assert log == "2"
    assert (project / ".git" / "config").read_text().count("[user]") == 1


def test_git_commit_in_a_repo_with_protected_config(confined: Runner, project: Path) -> None:
    shutil.rmtree(project / ".git")
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "config", "user.email", "a@b.c"], check=True)
    subprocess.run(["git", "-C", str(project), "config", "user.name", "A"], check=True)
    (project / "f").write_text("x\n")
    ok(confined("git add f && git commit -qm init && git status --short && git branch x && "
                "git checkout -q x && git stash list"))


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler on this machine")
def test_compile_and_run_c(confined: Runner, project: Path) -> None:
    (project / "hello.c").write_text(
        '#include <stdio.h>\nint main(void){puts("compiled");return 0;}\n')
    assert ok(confined("cc -O2 -o hello hello.c && ./hello")).stdout == "compiled\n"


@pytest.mark.linux  # macOS: no private loopback, so no network at all
@pytest.mark.differs("loopback-server")
def test_test_server_on_loopback_inside(confined: Runner) -> None:
    code = (
        "import http.server, threading, urllib.request\n"
        "srv = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\n"
        "threading.Thread(target=srv.serve_forever, daemon=True).start()\n"
        "url = f'http://127.0.0.1:{srv.server_port}/'\n"
        "print(urllib.request.urlopen(url, timeout=5).status)\n"
        "srv.shutdown()\n")
    assert ok(confined([sys.executable, "-c", code])).stdout.strip() == "200"


@pytest.mark.linux  # macOS: the temp directory is $TMPDIR, not /tmp
@pytest.mark.differs("tmp-by-name")
def test_tmp_round_trip_between_commands(confined: Runner, project: Path,
                                         home: Path) -> None:
    """/tmp is the project's own temp directory: what one command leaves there the
    next one finds (agents write a script to /tmp, then run it), and the host sees it
    in the project's temp directory, not in its shared /tmp."""
    name = f"swifty-{uuid.uuid4().hex}"
    ok(confined(f"echo from-sandbox > /tmp/{name} && echo $TMPDIR > /var/tmp/{name}.d"))
    assert ok(confined(f"cat /tmp/{name}")).stdout == "from-sandbox\n"
    assert not (Path("/tmp") / name).exists()
    host = Path(Sandbox(project, home=home).spec().temp_dir or "")
    assert (host / name).read_text() == "from-sandbox\n"
    (host / name).write_text("from-host\n")
    assert ok(confined(f"cat /tmp/{name}")).stdout == "from-host\n"
    python = ok(confined([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"]))
    assert python.stdout.strip() == "/tmp"


def test_temp_dir_round_trip_between_commands(confined: Runner) -> None:
    """Every platform: what one command leaves in its temp directory ($TMPDIR, else
    /tmp) the next one finds, and Python's tempfile writes there."""
    name = f"swifty-{uuid.uuid4().hex}"
    ok(confined(f'echo kept > "${{TMPDIR:-/tmp}}/{name}"'))
    assert ok(confined(f'cat "${{TMPDIR:-/tmp}}/{name}"')).stdout == "kept\n"
    code = "import tempfile\nwith tempfile.NamedTemporaryFile() as f: f.write(b'x'); print('ok')"
    assert ok(confined([sys.executable, "-c", code])).stdout == "ok\n"


@pytest.mark.differs("shm")
def test_python_multiprocessing(confined: Runner, project: Path) -> None:
    """fork and spawn pools, queues and locks (POSIX semaphores in /dev/shm). The
    forkserver method needs an AF_UNIX socket, which the default profile refuses."""
    (project / "pool.py").write_text(
        "import multiprocessing as mp\n"
        "def sq(x): return x * x\n"
        "if __name__ == '__main__':\n"
        "    for method in ('fork', 'spawn'):\n"
        "        with mp.get_context(method).Pool(2) as pool:\n"
        "            print(method, sum(pool.map(sq, range(10))))\n"
        "    q = mp.Queue(); q.put('queued'); print(q.get())\n"
        "    with mp.Lock(): print('locked')\n")
    out = ok(confined([sys.executable, "pool.py"], timeout=60)).stdout.split("\n")
    assert out[:4] == ["fork 285", "spawn 285", "queued", "locked"]


@pytest.mark.linux  # the error text is Linux's
@pytest.mark.differs("erofs")
def test_plan_mode_makes_the_project_read_only(project: Path, home: Path) -> None:
    box = Sandbox(project, home=home, mode="plan")
    result = box.run(["bash", "-c", "ls > listing.txt; cat .git/HEAD; echo read-ok"])
    assert "read-ok" in result.stdout
    assert not (project / "listing.txt").exists()
    assert "Read-only file system" in result.stderr


@pytest.mark.linux  # a private /tmp
@pytest.mark.differs("tmp-by-name")
def test_strict_profile_private_tmp_and_limited_reads(project: Path, home: Path) -> None:
    (home / ".swifty").mkdir()
    (home / ".swifty" / "config.yaml").write_text("sandbox: {profile: strict}\n")
    (home / "notes.txt").write_text("private notes\n")
    marker = Path("/tmp") / f"swifty-strict-{uuid.uuid4().hex}"
    box = Sandbox(project, home=home)
    result = box.run(["bash", "-c", f"echo x > {marker}; cat {marker}; cat ~/notes.txt; "
                                    "ls /usr/bin/env"])
    assert result.exit_code != 125, result.stderr
    assert "x\n" in result.stdout and "/usr/bin/env" in result.stdout
    assert not marker.exists()  # the command's /tmp was its own
    assert "private notes" not in result.stdout


def test_argv_with_shell_metacharacters_is_data(confined: Runner, project: Path) -> None:
    result = ok(confined(["printf", "%s\\n", "$(touch pwned)", "; rm -rf ~", "`id`"]))
    assert result.stdout == "$(touch pwned)\n; rm -rf ~\n`id`\n"
    assert not (project / "pwned").exists()


@pytest.mark.linux  # a project's own /tmp
@pytest.mark.parametrize("profile", ["default", "strict"])
def test_plan_mode_on_a_project_in_tmp_is_read_only(home: Path, profile: str) -> None:
    import tempfile

    (home / ".swifty").mkdir(exist_ok=True)
    (home / ".swifty" / "config.yaml").write_text(f"sandbox: {{profile: {profile}}}\n")
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        project = Path(tmp).resolve()
        (project / ".git").mkdir()
        (project / "README").write_text("visible\n")
        result = Sandbox(project, home=home, mode="plan").run(
            ["bash", "-c", "cat README; echo x > written.txt; echo done"])
        assert result.exit_code == 0 and result.stdout == "visible\ndone\n", result
        assert not (project / "written.txt").exists()


def _git(cwd: Path, *args: str) -> None:
    import subprocess

    env_args = ["-c", "user.email=a@b.c", "-c", "user.name=A", "-c",
                "protocol.file.allow=always"]
    subprocess.run(["git", *env_args, "-C", str(cwd), *args], check=True,
                   capture_output=True)


@pytest.fixture
def committed_repo(project: Path) -> Path:
    shutil.rmtree(project / ".git")
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "a@b.c")
    _git(project, "config", "user.name", "A")
    (project / "f").write_text("x\n")
    _git(project, "add", "f")
    _git(project, "commit", "-qm", "init")
    return project


def test_git_worktree_commit(confined: Runner, committed_repo: Path) -> None:
    """A worktree inside the project: its gitfile and per-worktree files are read-only,
    commits work; `git worktree add` itself works confined too."""
    _git(committed_repo, "worktree", "add", "-q", "wt", "-b", "feature")
    ok(confined("cd wt && echo y > g && git add g && git commit -qm in-worktree"))
    result = ok(confined("git worktree add -q wt2 -b other && cd wt2 && echo z > h && "
                         "git add h && git commit -qm second-worktree && git log --oneline"))
    assert "second-worktree" in result.stdout
    assert "moved" not in result.stderr
    assert (committed_repo / "wt2" / ".git").is_file()


def test_git_submodule_commit(confined: Runner, committed_repo: Path,
                              outside_temp: Path) -> None:
    library = outside_temp / "library"
    library.mkdir()
    _git(library, "init", "-q")
    (library / "lib.txt").write_text("v1\n")
    _git(library, "add", "lib.txt")
    _git(library, "commit", "-qm", "lib")
    _git(committed_repo, "submodule", "add", "-q", str(library), "lib")
    _git(committed_repo, "commit", "-qm", "add lib")
    ok(confined("cd lib && git config user.email >/dev/null; echo v2 > lib.txt && "
                "git -c user.email=a@b.c -c user.name=A commit -qam bump && cd .. && "
                "git add lib && git commit -qm 'bump lib' && git submodule status"))


def test_git_sparse_checkout_commit(confined: Runner, committed_repo: Path) -> None:
    (committed_repo / "docs").mkdir()
    (committed_repo / "docs" / "d").write_text("d\n")
    (committed_repo / "src").mkdir()
    (committed_repo / "src" / "s").write_text("s\n")
    _git(committed_repo, "add", "-A")
    _git(committed_repo, "commit", "-qm", "tree")
    _git(committed_repo, "sparse-checkout", "set", "src")
    ok(confined("echo t >> src/s && git commit -qam in-sparse && git status --short"))
    assert not (committed_repo / "docs").exists()


@pytest.mark.linux  # a private /tmp
@pytest.mark.differs("tmp-fallback")
def test_tmp_without_a_writable_cache_is_private(confined: Runner, home: Path) -> None:
    """No project temp directory can be made (here `~/.cache` is a file): the command
    still runs, as confined, with an empty /tmp of its own, and is told so."""
    (home / ".cache").write_text("not a directory\n")
    result = ok(confined("echo x > /tmp/a && cat /tmp/a"))
    assert result.stdout == "x\n"
    assert "private /tmp" in result.stderr


def _python_for(uid: int) -> list[str]:
    """This environment's `swifty-sandbox` as `uid` can start it: this interpreter, else
    (it lies under root's 0700 home: a pyenv build, as in CI) the system's of the same
    version with this environment's packages added (`site.addsitedir`, so that the
    editable install's finder loads)."""
    import subprocess
    import sysconfig

    boot = ("import runpy, site, sys; site.addsitedir(sys.argv.pop(1)); "
            "sys.argv[0] = 'swifty-sandbox'; "
            "runpy.run_module('swifty_sandbox.cli', run_name='__main__', alter_sys=True)")
    for python in (sys.executable, "/usr/bin/python3"):
        try:
            version = subprocess.run(
                [python, "-c", "import sys; print(sys.version_info[:2])"], user=uid,
                capture_output=True, text=True, check=False, timeout=30).stdout
        except OSError:
            continue
        if version.strip() == str(sys.version_info[:2]):
            return [python, "-c", boot, sysconfig.get_paths()["purelib"]]
    pytest.skip("no interpreter of this version that the other user can run")


@pytest.mark.linux
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root to give a folder to another user and run as one")
def test_another_users_private_folder_in_the_project_is_no_refusal() -> None:
    """A writable root holding a folder of another user's this one cannot search (a
    shared /tmp's `systemd-private-*` or an ssh agent's folder, with `tmp: host`): the
    command cannot enter it or change its mode either, so it is no reason to refuse.
    Run as `nobody`, a folder of root's, 0700; the control: the same folder made this
    user's and unsearchable (`chmod 000`, which the command could undo) is refused."""
    import subprocess
    import tempfile

    nobody = 65534
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        project, home = base / "proj", base / "home"
        for folder in (base, project, home):
            folder.mkdir(exist_ok=True)
            os.chown(folder, nobody, nobody)
        (project / "src.txt").write_text("ok\n")
        os.chown(project / "src.txt", nobody, nobody)
        private = project / "private"
        private.mkdir(mode=0o700)
        (private / ".env").write_text("SECRET\n")  # root's: nobody's commands cannot read it

        def run() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*_python_for(nobody), "run", "--", "cat", "src.txt"],
                cwd=project, user=nobody, group=nobody, extra_groups=[],
                env={"HOME": str(home), "PATH": os.environ["PATH"], "SWIFTY_DAEMON": "off",
                     "SWIFTY_BACKEND": os.environ.get("SWIFTY_BACKEND", "auto"),
                     "LANG": "C.UTF-8"},
                capture_output=True, text=True, check=False, timeout=120)

        done = run()
        assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
        os.chown(private, nobody, nobody)
        private.chmod(0)
        refused = run()
        assert refused.returncode == 125 and "cannot be searched" in refused.stderr, refused
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


@pytest.mark.linux
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="root's walk searches every folder, its commands do not")
def test_as_root_another_users_private_folder_holding_a_repository_is_no_refusal(
        confined: Runner, unconfined: Runner, project: Path) -> None:
    """Root's walk lists another user's 0700 folder (the kernel lets root search it), but
    its confined command, with no capability, cannot enter it: a repository, a gitfile's
    git dir or a hidden file in there is nothing to protect or hide, and bwrap, which
    could not reach it to mount it, made every run fail (125). Seen running from /tmp as
    the project, which held another user's test folders. The control: root outside reads
    what is in the folder; confined, the command runs and cannot."""
    import subprocess

    private = project / "private"
    private.mkdir(mode=0o700)
    subprocess.run(["git", "init", "-q", str(private / "repo")], check=True)
    (private / ".env").write_text("SECRET=1\n")
    (project / "sub").mkdir()
    (project / "sub" / ".git").write_text(f"gitdir: {private}/repo/.git\n")
    nobody = 65534
    subprocess.run(["chown", "-R", f"{nobody}:{nobody}", str(private)], check=True)
    try:
        assert unconfined("cat private/.env").stdout == "SECRET=1\n"  # the control
        done = confined("cat private/.env; ls private/repo; echo ran")
        assert done.stdout == "ran\n" and "Permission denied" in done.stderr, done
        assert (private / "repo" / ".git" / "HEAD").is_file()
    finally:
        subprocess.run(["rm", "-rf", str(private)], check=False)
