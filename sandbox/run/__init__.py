"""The run lifecycle: launching one command confined, the only spawner (`executor`), a
command that could not start (`execfail`), what a command left (`aftercare`), facts about
this machine (`probe`) and verdicts on them (`doctor`)."""
