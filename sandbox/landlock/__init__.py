"""Landlock backend: Landlock + seccomp, for where bwrap cannot make namespaces."""
