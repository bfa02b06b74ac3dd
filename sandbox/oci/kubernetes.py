"""`SandboxSpec → Kubernetes objects`: a Job that runs the command confined, and a
NetworkPolicy that denies its pod all traffic. Pure: the caller prints the YAML.

The pod runs the image's file system read-only (`readOnlyRootFilesystem`), as a non-root
user, without capabilities or privilege escalation, under the same syscall rows as the
Linux filter (a `Localhost` seccomp profile: the file `seccomp_profile_path` names must
be installed under each node's kubelet seccomp directory, usually
`/var/lib/kubelet/seccomp/`). The project is a `hostPath` volume at its own path (replace
it by a PersistentVolumeClaim on a fleet); inside it the spec's read-only paths and pins
are read-only / read-write `subPath` mounts of the same volume, hidden and missing
protected directories an empty read-only `emptyDir`, hidden and missing protected files
an empty file from a ConfigMap. /tmp and /var/tmp are an `emptyDir`. The host's other
paths (home, writable roots outside the project) are not in the pod at all. No service
account token and no service links reach the command.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from swifty_sandbox.policy.paths import is_within

from ..spec.compiler import TEMP_MOUNTS, SandboxSpec

LABEL = "swifty-sandbox/job"
NOBODY = 65534  # runAsNonRoot refuses uid 0: root callers' jobs run as nobody
_EMPTY_FILE = "swifty-sandbox-empty-file"


def seccomp_profile_path(seccomp: dict[str, Any]) -> str:
    """Where the profile lives below the kubelet's seccomp directory: named by its
    content, so a changed policy never reuses a stale file on a node."""
    canonical = json.dumps(seccomp, sort_keys=True, separators=(",", ":"))
    return f"swifty-sandbox/{hashlib.sha256(canonical.encode()).hexdigest()[:16]}.json"


def _mounts(spec: SandboxSpec) -> tuple[list[dict[str, Any]], set[str]]:
    """The container's volume mounts, and the names of the volumes they use.
    One mount per path; in bwrap's order, so a later kind (hidden) replaces an earlier
    one (read-only) on the same path."""
    by_path: dict[str, dict[str, Any]] = {
        spec.project: {"name": "project", "mountPath": spec.project,
                       "readOnly": spec.project not in spec.writable}}
    for path in TEMP_MOUNTS:
        by_path[path] = {"name": "tmp", "mountPath": path}

    def inside(paths: Sequence[str]) -> list[str]:
        return [p for p in paths if p != spec.project and is_within(p, spec.project)]

    def sub(path: str, read_only: bool) -> dict[str, Any]:
        return {"name": "project", "mountPath": path,
                "subPath": path[len(spec.project):].lstrip("/"), "readOnly": read_only}

    for path in inside(spec.pinned):
        by_path[path] = sub(path, False)
    for path in inside(spec.read_only):
        by_path[path] = sub(path, True)
    for path in inside((*spec.guard_dirs, *spec.unreadable_dirs)):
        by_path[path] = {"name": "empty-dir", "mountPath": path, "readOnly": True}
    for path in inside((*spec.guard_files, *spec.unreadable_files)):
        by_path[path] = {"name": "empty-file", "mountPath": path, "subPath": "empty",
                         "readOnly": True}
    return list(by_path.values()), {m["name"] for m in by_path.values()}


def kubernetes_objects(spec: SandboxSpec, command: Sequence[str], *, image: str,
                       uid: int, gid: int, seccomp_path: str) -> list[dict[str, Any]]:
    digest = hashlib.sha256(json.dumps([spec.project, *command]).encode()).hexdigest()
    name = f"swifty-sandbox-{digest[:10]}"
    labels = {"app.kubernetes.io/name": "swifty-sandbox", LABEL: name}
    user = uid or NOBODY
    group = gid if uid else NOBODY
    mounts, used = _mounts(spec)
    volumes: list[dict[str, Any]] = [
        {"name": "project", "hostPath": {"path": spec.project, "type": "Directory"}},
        {"name": "tmp", "emptyDir": {}},
    ]
    if "empty-dir" in used:
        volumes.append({"name": "empty-dir", "emptyDir": {"sizeLimit": "1Ki"}})
    if "empty-file" in used:
        volumes.append({"name": "empty-file", "configMap": {
            "name": _EMPTY_FILE, "items": [{"key": "empty", "path": "empty"}]}})
    container: dict[str, Any] = {
        "name": "command",
        "image": image,
        "command": list(command),
        "workingDir": spec.cwd,
        "env": [{"name": "TMPDIR", "value": "/tmp"}],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": user,
            "runAsGroup": group,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "Localhost", "localhostProfile": seccomp_path},
        },
        "volumeMounts": mounts,
    }
    if spec.limits.memory_bytes is not None:
        container["resources"] = {"limits": {"memory": str(spec.limits.memory_bytes)}}
    job_spec: dict[str, Any] = {
        "backoffLimit": 0,
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "restartPolicy": "Never",
                "automountServiceAccountToken": False,
                "enableServiceLinks": False,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": user,
                    "runAsGroup": group,
                    "seccompProfile": {"type": "Localhost",
                                       "localhostProfile": seccomp_path},
                },
                "containers": [container],
                "volumes": volumes,
            },
        },
    }
    if spec.limits.timeout is not None:
        job_spec["activeDeadlineSeconds"] = max(1, int(spec.limits.timeout))
    objects: list[dict[str, Any]] = [
        {"apiVersion": "batch/v1", "kind": "Job",
         "metadata": {"name": name, "labels": dict(labels)}, "spec": job_spec},
        # No rule in either direction: nothing leaves the pod and nothing reaches it
        # (enforced by network plugins that implement NetworkPolicy).
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": name, "labels": dict(labels)},
         "spec": {"podSelector": {"matchLabels": {LABEL: name}},
                  "policyTypes": ["Ingress", "Egress"], "ingress": [], "egress": []}},
    ]
    if "empty-file" in used:
        objects.insert(0, {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": _EMPTY_FILE,
                                        "labels": {"app.kubernetes.io/name": "swifty-sandbox"}},
                           "data": {"empty": ""}})
    return objects
