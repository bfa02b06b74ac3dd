"""Linux backend: bubblewrap + seccomp."""
