"""`compile --target oci|oci-seccomp`: the bundle's config.json against the OCI
runtime-spec schema (from ../shared/), field by field, and the CLI around it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main
from swifty_sandbox.sandbox.oci.bundle import oci_config, write_bundle
from swifty_sandbox.sandbox.oci.seccomp import oci_seccomp

from ..conftest import write_rules

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT.parent / "shared" / "schemas" / "oci-runtime-spec"
TOP = [("bin", "usr/bin"), ("etc", None), ("home", None), ("proc", None), ("usr", None),
       ("tmp", None), (".dockerenv", None)]


def _schemas() -> dict[str, Any]:
    if not (SCHEMAS / "config-schema.json").exists():
        pytest.fail(f"missing {SCHEMAS}") if os.environ.get("CI") else pytest.skip(
            "no shared schemas")
    return {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.json")}


def validate(config: dict[str, Any]) -> None:
    """The runtime-spec schema, then every key checked against the properties the
    schema names at its place (the schema itself lets unknown keys through)."""
    files = _schemas()
    registry: Registry[Any] = Registry().with_resources(
        (name, Resource.from_contents(body, default_specification=DRAFT4))
        for name, body in files.items())
    jsonschema.Draft4Validator(files["config-schema.json"], registry=registry).validate(config)

    def deref(schema: dict[str, Any], file: str) -> tuple[dict[str, Any], str]:
        while "$ref" in schema:
            target, _, pointer = schema["$ref"].partition("#")
            file = target or file
            schema = files[file]
            for part in pointer.strip("/").split("/"):
                if part:
                    schema = schema[part]
        return schema, file

    def walk(schema: dict[str, Any], file: str, value: Any, where: str) -> None:
        schema, file = deref(schema, file)
        options = [deref(s, file) for key in ("anyOf", "oneOf", "allOf")
                   for s in schema.get(key, ())] or [(schema, file)]
        if isinstance(value, dict):
            known = {k: (s, f) for s, f in options for k, s in s.get("properties", {}).items()}
            if not known:
                assert "additionalProperties" in schema or "patternProperties" in schema, where
                return
            for key, item in value.items():
                assert key in known, f"{where}.{key} is not a runtime-spec field"
                walk(known[key][0], known[key][1], item, f"{where}.{key}")
        elif isinstance(value, list):
            for s, f in options:
                if "items" in s:
                    for item in value:
                        walk(s["items"], f, item, f"{where}[]")

    walk(files["config-schema.json"], "config-schema.json", config, "config")


@pytest.fixture
def config(project: Path, home: Path) -> Callable[..., dict[str, Any]]:
    def make(**env: str) -> dict[str, Any]:
        spec = Sandbox(project, home=home).spec()
        return oci_config(spec, ["make", "test"], environ={"PATH": "/usr/bin", **env},
                          uid=1000, gid=1000, top_level=TOP)

    return make


def test_the_config_is_valid_runtime_spec(config: Callable[..., dict[str, Any]]) -> None:
    validate(config())


def test_a_misspelt_field_would_be_caught(config: Callable[..., dict[str, Any]]) -> None:
    broken = config()
    broken["process"]["noNewPrivilege"] = True  # the schema alone accepts this
    with pytest.raises(AssertionError, match="noNewPrivilege"):
        validate(broken)


def test_the_confinement_it_asks_for(config: Callable[..., dict[str, Any]], project: Path,
                                     home: Path) -> None:
    cfg = config(GITHUB_TOKEN="x", HOME=str(home))
    process, linux = cfg["process"], cfg["linux"]
    assert process["args"] == ["make", "test"] and process["cwd"] == str(project)
    assert process["noNewPrivileges"] is True
    assert all(caps == [] for caps in process["capabilities"].values())
    assert len(process["capabilities"]) == 5
    assert "GITHUB_TOKEN=x" not in process["env"] and f"HOME={home}" in process["env"]
    assert {n["type"] for n in linux["namespaces"]} == {
        "user", "pid", "ipc", "uts", "mount", "cgroup", "network"}
    assert all("path" not in n for n in linux["namespaces"])  # new ones, joined to nothing
    assert linux["uidMappings"] == [{"containerID": 0, "hostID": 1000, "size": 1}]
    assert linux["seccomp"] == oci_seccomp(Sandbox(project, home=home).spec().seccomp)
    assert cfg["root"] == {"path": "rootfs", "readonly": True}
    assert not any(m["type"] == "cgroup" for m in cfg["mounts"])  # hybrid hosts cannot


def test_mounts_follow_bwraps_order(project: Path, home: Path) -> None:
    (home / ".ssh").mkdir()
    (project / ".env").write_text("x")
    (project / ".git" / "hooks").mkdir()
    write_rules(home / ".swifty" / "permissions.yaml", [("ReadFile(.env)", "deny")])
    spec = Sandbox(project, home=home).spec()
    mounts = oci_config(spec, ["true"], environ={}, uid=0, gid=0, top_level=TOP)["mounts"]
    where = {m["destination"]: i for i, m in enumerate(mounts)}
    by_dest = {m["destination"]: m for m in mounts}
    # 1. the host's top level read-only (recursively), not the links, /proc or /dev.
    assert by_dest["/usr"]["options"][:2] == ["rbind", "rro"]
    assert "/bin" not in where and by_dest["/proc"]["type"] == "proc"
    assert by_dest["/.dockerenv"]["source"] == "/.dockerenv"
    # 4. the project read-write, after the top level and the temp dirs.
    assert "rw" in by_dest[str(project)]["options"]
    assert where["/home"] < where["/tmp"] < where[str(project)]
    # 6. protected paths read-only, after the project; 7. hidden paths last.
    hooks = str(project / ".git" / "hooks")
    assert "rro" in by_dest[hooks]["options"] and where[str(project)] < where[hooks]
    guard = by_dest[str(project / ".git" / "config")]  # missing: an empty read-only file
    assert guard["source"] == "/dev/null" and "ro" in guard["options"]
    assert by_dest[str(home / ".ssh")]["type"] == "tmpfs"
    assert "mode=000" in by_dest[str(home / ".ssh")]["options"]
    assert by_dest[str(project / ".env")]["source"] == "/dev/null"
    assert where[hooks] < where[str(home / ".ssh")] < where[str(project / ".env")]


def test_write_bundle_makes_rootfs_with_the_top_level_links(project: Path, home: Path,
                                                            outside_temp: Path) -> None:
    bundle = outside_temp / "bundle"
    spec = Sandbox(project, home=home).spec()
    config = write_bundle(bundle, spec, ["true"])
    assert json.loads((bundle / "config.json").read_text()) == config
    for entry in os.scandir("/"):
        if entry.is_symlink():
            assert os.readlink(bundle / "rootfs" / entry.name) == os.readlink(entry.path)
    assert not [e for e in os.scandir(bundle / "rootfs") if not e.is_symlink()]
    validate(config)


def _compile(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["compile", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_oci_seccomp_prints_the_object(project: Path, home: Path) -> None:
    code, out, _ = _compile("--target", "oci-seccomp", "--project", str(project))
    assert code == 0
    assert json.loads(out) == oci_seccomp(Sandbox(project, home=home).spec().seccomp)
    code, out, _ = _compile("--target", "oci-seccomp", "--project", str(project), "--json")
    assert json.loads(out)["target"] == "oci-seccomp" and "seccomp" in json.loads(out)


def test_cli_oci_writes_a_bundle(project: Path, outside_temp: Path) -> None:
    bundle = outside_temp / "b"
    code, out, _ = _compile("--target", "oci", "--project", str(project), "--bundle",
                            str(bundle), "--", "echo", "hi")
    assert code == 0 and str(bundle) in out
    config = json.loads((bundle / "config.json").read_text())
    assert config["process"]["args"] == ["echo", "hi"]
    code, out, _ = _compile("--target", "oci", "--project", str(project), "--bundle",
                            str(bundle), "--json", "--", "echo", "again")
    assert code == 0 and json.loads(out)["config"]["process"]["args"] == ["echo", "again"]


@pytest.mark.parametrize("where", ["project", "temp"])
def test_cli_refuses_a_bundle_a_command_could_rewrite(project: Path, home: Path,
                                                      where: str) -> None:
    """A bundle inside a writable root would let one run rewrite the next one's
    config.json (no seccomp, the host's / read-write)."""
    spec = Sandbox(project, home=home).spec()
    inside = project / "bundle" if where == "project" else Path(spec.temp_dir or "/tmp") / "b"
    code, _, err = _compile("--target", "oci", "--project", str(project), "--bundle",
                            str(inside), "--", "true")
    assert code == 2 and "rewrite its own next sandbox" in err
    assert not inside.exists()


def test_cli_needs_a_bundle_a_command_and_an_empty_directory(project: Path,
                                                             outside_temp: Path) -> None:
    code, _, err = _compile("--target", "oci", "--project", str(project), "--", "true")
    assert code == 2 and "--bundle DIR" in err
    code, _, err = _compile("--target", "oci", "--project", str(project), "--bundle",
                            str(outside_temp / "b"))
    assert code == 2 and "-- CMD ARG" in err
    (outside_temp / "busy").mkdir()
    (outside_temp / "busy" / "notes.txt").write_text("mine")
    code, _, err = _compile("--target", "oci", "--project", str(project), "--bundle",
                            str(outside_temp / "busy"), "--", "true")
    assert code == 2 and "holds files other than a bundle" in err
    assert not (outside_temp / "busy" / "config.json").exists()
