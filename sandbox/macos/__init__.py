"""macOS: seatbelt (`sandbox-exec`)."""
