"""click commands: thin shells over `swifty_sandbox.Sandbox`."""
