"""OCI backend: the runtime-spec bundle (runc, crun), the `linux.seccomp` object
(Docker, Podman) and Kubernetes objects, each a pure rendering of a `SandboxSpec`."""
