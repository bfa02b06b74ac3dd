"""`compile --target kubernetes`: a YAML stream whose every field name is one the
Kubernetes API publishes (tests/data/kubernetes-openapi-fields.json, trimmed from
kubernetes/kubernetes' OpenAPI spec), and the confinement it asks for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.main import main
from swifty_sandbox.sandbox.oci.kubernetes import kubernetes_objects, seccomp_profile_path
from swifty_sandbox.sandbox.oci.seccomp import oci_seccomp

from ..conftest import write_rules

API = json.loads((Path(__file__).parents[1] / "data" / "kubernetes-openapi-fields.json")
                 .read_text())


def check_fields(definition: str, value: Any, where: str) -> int:
    """Every key of `value` is a property of `definition`, recursively; the number of
    keys checked."""
    properties = API["definitions"][definition]
    checked = 0
    for key, item in value.items():
        assert key in properties, f"{where}.{key} is not a field of {definition}"
        checked += 1
        kind = properties[key]
        if kind.startswith("[]"):
            assert isinstance(item, list), f"{where}.{key}"
            for i, element in enumerate(item):
                checked += check_fields(kind[2:], element, f"{where}.{key}[{i}]")
        elif kind in API["definitions"]:
            checked += check_fields(kind, item, f"{where}.{key}")
        elif kind == "map":
            assert isinstance(item, dict) and all(isinstance(v, str) for v in item.values())
        else:
            assert not isinstance(item, dict), f"{where}.{key} is a scalar field"
    return checked


def check_stream(text: str) -> list[dict[str, Any]]:
    documents = list(yaml.safe_load_all(text))
    assert "&id" not in text and "*id" not in text  # no YAML aliases: plain documents
    for doc in documents:
        kind = API["kinds"][f"{doc['apiVersion']} {doc['kind']}"]
        assert check_fields(kind, doc, doc["kind"]) > 3
    return documents


def kind(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == name)


def objects(project: Path, home: Path, uid: int = 1000) -> list[dict[str, Any]]:
    spec = Sandbox(project, home=home).spec()
    seccomp = seccomp_profile_path(oci_seccomp(spec.seccomp))
    return kubernetes_objects(spec, ["make", "test"], image="debian:bookworm-slim",
                              uid=uid, gid=uid, seccomp_path=seccomp)


def test_every_field_is_a_kubernetes_api_field(project: Path, home: Path) -> None:
    (project / ".env").write_text("x")
    (project / "secrets").mkdir()
    write_rules(home / ".swifty" / "permissions.yaml", [("ReadFile(.env)", "deny"),
                                                        ("ReadFile(secrets/**)", "deny")])
    docs = check_stream(yaml.safe_dump_all(objects(project, home), sort_keys=False))
    assert [d["kind"] for d in docs] == ["ConfigMap", "Job", "NetworkPolicy"]


def test_a_wrong_field_name_would_be_caught(project: Path, home: Path) -> None:
    job = kind(objects(project, home), "Job")
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFS"] = True
    with pytest.raises(AssertionError, match="readOnlyRootFS"):
        check_stream(yaml.safe_dump(job))


def test_the_job_asks_for_the_confinement(project: Path, home: Path) -> None:
    (project / ".git" / "hooks").mkdir()
    (project / ".env").write_text("x")
    write_rules(home / ".swifty" / "permissions.yaml", [("ReadFile(.env)", "deny")])
    config_map, job, policy = objects(project, home)
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    context = container["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False and context["privileged"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["runAsNonRoot"] is True and context["runAsUser"] == 1000
    profile = pod["securityContext"]["seccompProfile"]
    assert profile["type"] == "Localhost"
    assert profile["localhostProfile"].startswith("swifty-sandbox/")
    assert pod["automountServiceAccountToken"] is False and pod["restartPolicy"] == "Never"
    assert container["command"] == ["make", "test"]
    assert container["workingDir"] == str(project)
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes[mounts[str(project)]["name"]]["hostPath"] == {"path": str(project),
                                                                 "type": "Directory"}
    assert volumes[mounts["/tmp"]["name"]] == {"name": "tmp", "emptyDir": {}}
    hooks = mounts[str(project / ".git" / "hooks")]
    assert hooks == {"name": "project", "mountPath": hooks["mountPath"],
                     "subPath": ".git/hooks", "readOnly": True}
    env_file = mounts[str(project / ".env")]
    assert env_file["readOnly"] and "configMap" in volumes[env_file["name"]]
    assert config_map["data"] == {"empty": ""}
    labels = job["spec"]["template"]["metadata"]["labels"]
    spec = policy["spec"]
    assert spec["podSelector"]["matchLabels"].items() <= labels.items()
    assert spec["policyTypes"] == ["Ingress", "Egress"] and spec["egress"] == []


def test_root_callers_run_as_nobody(project: Path, home: Path) -> None:
    pod = kind(objects(project, home, uid=0), "Job")["spec"]["template"]["spec"]
    context = pod["securityContext"]
    assert context["runAsUser"] == 65534 and context["runAsNonRoot"] is True


def test_cli_prints_yaml_and_writes_the_profile(project: Path, home: Path,
                                                outside_temp: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["compile", "--target", "kubernetes", "--project",
                                  str(project), "--bundle", str(outside_temp / "k"), "--",
                                  "pytest", "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    docs = check_stream(result.stdout)
    path = kind(docs, "Job")["spec"]["template"]["spec"]["securityContext"]["seccompProfile"][
        "localhostProfile"]
    written = json.loads((outside_temp / "k" / path).read_text())
    assert written == oci_seccomp(Sandbox(project, home=home).spec().seccomp)
    assert f"/var/lib/kubelet/seccomp/{path}" in result.stderr
    again = runner.invoke(main, ["compile", "--target", "kubernetes", "--project",
                                 str(project), "--json", "--", "pytest", "-q"])
    body = json.loads(again.stdout)
    assert body["seccomp_profile"] == {"path": path, "profile": written}
    assert [o["kind"] for o in body["objects"]][-2:] == ["Job", "NetworkPolicy"]
