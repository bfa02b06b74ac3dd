"""What must hold, platform neutral: `Policy + mode → SandboxSpec` (`compiler`), from the
glob expansion (`expand`), the writable roots to create (`roots`), what git and the agents
would execute or trust (`gitfiles`, `gitindex`, `agentexec`), what runs outside next
(`pathguard`), the toolchain caches (`toolchains`) and the syscall rows (`syscalls`)."""
