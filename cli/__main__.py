"""`python -m swifty_sandbox.cli`."""

from .entry import main

main()
