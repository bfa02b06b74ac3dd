"""uid 0's home, looked up once per process while the user database files keep their
identity (`engine._superuser_home`): a change to either is looked up again, and a
source other than the files is looked up every time."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from swifty_sandbox.policy import engine


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
             ) -> tuple[Path, list[str], list[str]]:
    nsswitch, passwd = tmp_path / "nsswitch.conf", tmp_path / "passwd"
    nsswitch.write_text("passwd:         files systemd\ngroup: files\n")
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setattr(engine, "_USER_DB", (str(nsswitch), str(passwd)))
    monkeypatch.setattr(engine, "_SUPERUSER", [])
    homes = [str(tmp_path / "first")]
    looked: list[str] = []

    def getpwuid(uid: int) -> pwd.struct_passwd:
        assert uid == 0
        looked.append(homes[0])
        return pwd.struct_passwd(("root", "x", 0, 0, "root", homes[0], "/bin/bash"))

    monkeypatch.setattr(pwd, "getpwuid", getpwuid)
    return tmp_path, looked, homes


def test_kept_while_the_files_are_unchanged_and_looked_up_again_after(
        database: tuple[Path, list[str], list[str]]) -> None:
    folder, looked, homes = database
    first = engine._superuser_home()
    assert first == os.path.realpath(folder / "first")
    assert engine._superuser_home() == first and len(looked) == 1  # kept
    homes[0] = str(folder / "second")
    passwd = folder / "passwd"
    passwd.write_text("root:x:0:0:root:/second:/bin/bash\n")  # another size and ctime
    assert engine._superuser_home() == os.path.realpath(folder / "second")
    assert len(looked) == 2
    homes[0] = str(folder / "third")
    (folder / "nsswitch.conf").write_text("passwd: files\n")
    assert engine._superuser_home() == os.path.realpath(folder / "third")
    assert len(looked) == 3


def test_a_source_beyond_the_files_is_looked_up_every_time(
        database: tuple[Path, list[str], list[str]]) -> None:
    folder, looked, _ = database
    (folder / "nsswitch.conf").write_text("passwd: files ldap\n")
    engine._superuser_home()
    engine._superuser_home()
    assert len(looked) == 2
