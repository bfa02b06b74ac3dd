"""Shell analysis: the internal form, coverage on real corpora, robustness."""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swifty_sandbox.policy.analysis import analyse
from swifty_sandbox.policy.commands import invocations
from swifty_sandbox.policy.engine import Policy, decide, load_policy
from swifty_sandbox.policy.shell import parse
from swifty_sandbox.policy.types import Decision, Effect, Layer, Mode, Request, SandboxMode

from . import corpora


def runs(command: str) -> list[list[str]]:
    return [[w.shown for w in inv.argv] for inv in invocations(parse(command))]


def runs_of(command: str) -> list[list[str]]:
    """What the whole analysis (every reading) finds run."""
    return [[w.shown for w in inv.argv] for inv in analyse(Request.bash(command)).invocations]


@pytest.mark.parametrize(("command", "expected"), [
    ("git status && curl x | jq .", [["git", "status"], ["curl", "x"], ["jq", "."]]),
    ("echo 'a;b' \"c && d\" > out 2>&1", [["echo", "a;b", "c && d"]]),
    ("FOO=1 make -j4", [["make", "-j4"]]),
    ("r\\m -rf x", [["rm", "-rf", "x"]]),
    ("$'\\x6c\\x73' -la", [["ls", "-la"]]),
    ("sudo -u bob env A=1 timeout 5 make", [["make"]]),
    ("bash -c 'cd x && make'", [["bash", "-c", "cd x && make"], ["cd", "x"], ["make"]]),
    ("find . -name '*.o' -exec rm {} +", [["find", ".", "-name", "*.o", "-exec", "rm", "{}",
                                           "+"], ["rm", "{}"]]),
    ("x=$(git rev-parse HEAD); echo $x", [["echo", "$x"], ["git", "rev-parse", "HEAD"]]),
    ("[[ -f a ]] && cat a", [["cat", "a"]]),
    ("case $1 in start) run;; esac", [["run"]]),
    ("python3 - < script.py", [["python3", "-"]]),
    ("bash <<'EOF'\nls\nEOF", [["bash"], ["ls"]]),
])
def test_what_runs(command: str, expected: list[list[str]]) -> None:
    assert sorted(runs(command)) == sorted(expected)


def test_words_known_only_at_run_time_are_marked() -> None:
    script = parse('cp "$SRC"/a.txt ~/b $(pwd)/c')
    words = script.commands[0].words
    assert [w.value for w in words] == ["cp", None, "~/b", None]


def test_redirect_targets_are_seen() -> None:
    from swifty_sandbox.policy.programs import builtin_table
    from swifty_sandbox.policy.writes import written_paths

    analysis = analyse(Request.bash("make > build.log 2>&1; echo x >> .swifty/config.yaml "
                                    "2> /dev/null; cat x >&2 > -"))
    assert written_paths(analysis, builtin_table(), "/p", "/h") == [
        "/p/build.log", "/p/.swifty/config.yaml"]


def test_protected_redirect_is_denied(box_for: object) -> None:
    from swifty_sandbox import Effect, Layer

    box = box_for(mode="bypassPermissions")  # type: ignore[operator]
    for command in ("echo x > .swifty/config.yaml", "cat >> .git/hooks/pre-commit <<EOF\nx\nEOF",
                    "echo x >& .swifty/permissions.local.yaml",
                    "bash -c 'echo evil >> ~/.bashrc'", "tee -a x > .swifty/permissions.yaml"):
        decision = box.check(command)
        assert (decision.effect, decision.layer) == (Effect.DENY, Layer.PROTECTED), command


# -- corpora -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus() -> dict[str, list[str]]:
    if not corpora.CORPORA.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the shared corpora are missing: {corpora.CORPORA}")
        pytest.skip(f"no shared corpora at {corpora.CORPORA}")
    return corpora.load()


def unparsed(commands: list[str]) -> list[str]:
    return [c for c in commands if parse(c).error]


def bash_accepts(command: str) -> bool:
    return subprocess.run(["bash", "-n", "-c", command], capture_output=True,
                          check=False).returncode == 0


def test_every_agent_command_is_fully_analysed(corpus: dict[str, list[str]]) -> None:
    assert unparsed(corpus["agent"]) == []
    assert all(analyse(Request.bash(c)).opaque is None for c in corpus["agent"]
               if "$" not in c.split()[0])


def test_corpus_coverage(corpus: dict[str, list[str]]) -> None:
    """≥ 99.9 % of the commands bash itself accepts are analysed by a real parser; the
    rest of the failures are not valid shell at all (placeholders like `<file>`, vim
    keystrokes), which bash refuses too, so nothing of them would run."""
    commands = corpus["nl2bash"] + corpus["tldr"]
    failed = unparsed(commands)
    valid_failed = [c for c in failed if bash_accepts(c)]
    valid = len(commands) - (len(failed) - len(valid_failed))
    rate = 1 - len(valid_failed) / valid
    print(f"\nparsed {len(commands) - len(failed)}/{len(commands)} "
          f"({100 * (1 - len(failed) / len(commands)):.2f}% of all lines); "
          f"{100 * rate:.3f}% of the {valid} lines bash accepts")
    assert rate >= 0.999, valid_failed[:20]


def test_corpus_denials_are_current_and_rare(corpus: dict[str, list[str]]) -> None:
    current = corpora.denials(corpus)
    recorded = [line for line in corpora.DENIALS.read_text().splitlines() if line]
    assert current == recorded, (
        "the blacklist's verdicts on the corpora changed: review the difference, then "
        "run `python tests/policy/corpora.py` to record it")
    total = sum(len(c) for c in corpus.values())
    # Every recorded entry has been reviewed as a real match of its category (44 are
    # tldr's own mkfs examples). A regression guard, not the 0.2 % target itself.
    assert len(current) / total <= 0.0025


# -- robustness ----------------------------------------------------------------------------

_SHELLISH = st.text(alphabet=st.sampled_from(list("abrmf -/~*.;|&$()`'\"<>{}[]\\\n=#!0123")),
                    max_size=60)


@pytest.fixture(scope="module")
def allow_all(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    """Every command allowed by rule, mode and sandbox: only the blacklist, protected
    paths and what the analysis could not see stand in the way."""
    base = tmp_path_factory.mktemp("allow-all")
    (base / "home" / ".swifty").mkdir(parents=True)
    (base / "home" / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash\n  effect: allow\n")
    (base / "project").mkdir()
    return load_policy(base / "project", base / "home")


def _assert_decided_safely(policy: Policy, text: str) -> Decision:
    """The properties every string must have: the blacklist's verdict is the decision
    when it has one; what the analysis could not see is never allowed; an allow is
    given only to what was seen whole and passed the blacklist."""
    from swifty_sandbox.policy.blacklist import check

    request = Request.bash(text)
    analysis = analyse(request)
    match = check(list(analysis.invocations), str(policy.home), policy.roots)
    decision = decide(policy, request, Mode.BYPASS, SandboxMode.AUTO)
    if match is not None:
        assert (decision.effect, decision.layer, decision.category) == (
            Effect.DENY, Layer.BLACKLIST, match.category), (text, decision)
    elif analysis.opaque is not None:
        assert decision.effect is not Effect.ALLOW, (text, decision)
    if decision.effect is Effect.ALLOW:
        assert match is None and analysis.opaque is None, (text, decision)
    return decision


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SHELLISH)
def test_arbitrary_strings_always_get_a_safe_decision(allow_all: Policy, text: str) -> None:
    _assert_decided_safely(allow_all, text)


def test_the_safe_decision_property_can_fail(allow_all: Policy) -> None:
    """The control: each branch of the property is reached by some string."""
    effects = {_assert_decided_safely(allow_all, text).layer for text in
               ("ls", "rm -rf /", "echo $(", "echo hi > ~/.bashrc")}
    assert effects == {Layer.RULE, Layer.BLACKLIST, Layer.ANALYSIS, Layer.PROTECTED}


@settings(max_examples=300, deadline=None)
@given(prefix=_SHELLISH, glue=st.sampled_from([" && ", "; ", " | ", "\n", " || ", " & "]))
def test_dangerous_command_after_garbage_is_never_allowed(prefix: str, glue: str) -> None:
    """Garbage may legitimately turn `rm -rf /` into data (`\\; rm -rf /` runs a
    command named `;`). What must never happen: the analysis sees `rm -rf /` run and
    does not deny, or cannot analyse the string and does not say so."""
    from swifty_sandbox.policy.blacklist import check

    analysis = analyse(Request.bash(prefix + glue + "rm -rf /"))
    denied = check(list(analysis.invocations), "/home/u") is not None
    runs_it = any([w.shown for w in inv.argv] == ["rm", "-rf", "/"]
                  for inv in analysis.invocations)
    assert denied or not runs_it, prefix
    parsed = all(not inv.script.error for inv in analysis.invocations)
    assert denied or parsed or analysis.opaque is not None, prefix


@pytest.mark.parametrize("prefix", ["ls", "echo 'a", "cat <<EOF", "f() {", "[[ -d / ]]",
                                    "$(", "`", "((", "for x in", "case", "{", "if"])
def test_dangerous_command_after_unfinished_constructs(prefix: str) -> None:
    from swifty_sandbox.policy.blacklist import check

    for glue in (" && ", "; ", "\n"):
        analysis = analyse(Request.bash(prefix + glue + "rm -rf /"))
        denied = check(list(analysis.invocations), "/home/u") is not None
        assert denied or analysis.opaque is not None, (prefix, glue)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_real_commands(allow_all: Policy, data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(["git push -f origin main", "curl x | sh",
                                      "rm -rf ~/", "sleep 600", "dd if=a of=/dev/sda"]))
    position = data.draw(st.integers(0, len(base)))
    insert = data.draw(st.sampled_from(["'", '"', "\\", "$(", "`", "(", "{", " ", ";"]))
    mutated = base[:position] + insert + base[position:]
    decision = _assert_decided_safely(allow_all, mutated)
    # Still run as it was (the insert landed in a harmless place): still denied.
    dangerous = {"git push -f origin main", "rm -rf ~/", "sleep 600", "dd if=a of=/dev/sda"}
    if base in dangerous and base.split() in runs_of(mutated):
        assert decision.effect is Effect.DENY, (mutated, decision)


@pytest.mark.parametrize("command", [
    "(" * 3000 + "rm -rf /" + ")" * 3000,
    "$(" * 3000 + "rm -rf /" + ")" * 3000,
    "echo " + '"$(echo ' * 600 + "x" + ')"' * 600 + "; rm -rf /",
])
def test_absurd_nesting_is_denied_or_unanalysable_never_a_crash(command: str) -> None:
    from swifty_sandbox.policy.blacklist import check

    analysis = analyse(Request.bash(command))
    assert check(list(analysis.invocations), "/home/u") is not None
