"""A Bash request, analysed: the invocations that may run and what could not be seen."""

from __future__ import annotations

from dataclasses import dataclass

from .commands import Invocation, invocations
from .shell import Script, Simple, Word, new_pipeline, parse, rough
from .types import Request


@dataclass(frozen=True, slots=True)
class BashAnalysis:
    invocations: tuple[Invocation, ...]
    opaque: str | None  # why some part could not be seen (rules then cannot allow)

    def rule_forms(self) -> list[list[str]]:
        """For each invocation, its written forms as text, innermost last."""
        return [[" ".join(w.shown for w in form) for form in inv.forms]
                for inv in self.invocations]


def analyse(request: Request) -> BashAnalysis:
    if request.argv is not None:
        words = tuple(Word(a, a) for a in request.argv)
        script = Script((Simple(words, pipeline=new_pipeline()),) if words else ())
    else:
        script = parse(request.command or "")
    try:
        found = tuple(invocations(script))
        opaque = next((e for e in script.errors()), None) or next(
            (inv.script.error for inv in found if inv.script.error), None)
    except RecursionError:
        # Thousands of nested `(` or `$(`: no sound reading, so never allowed; the
        # blacklist still gets a flat reading of the words.
        text = request.command if request.command is not None else " ".join(request.argv or ())
        return BashAnalysis(tuple(invocations(rough(text))), "nested too deeply")
    if opaque is None:
        computed = next((inv for inv in found if inv.program is None), None)
        if computed is not None:
            opaque = computed.argv[0].text
    return BashAnalysis(found, opaque)
