"""`python -m swifty_sandbox.cli`."""

from .main import main

main()
