"""The network of one run: the host-side egress proxy (`netproxy`) and the forwarder,
the first process inside (`netforward`)."""
