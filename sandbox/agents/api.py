"""`Sandbox`: the one public entry point; the CLI and the agent protocol are thin
shells over it."""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, assert_never

from swifty_sandbox.messages import t
from swifty_sandbox.policy import (
    Decision,
    Effect,
    Layer,
    Mode,
    Policy,
    Request,
    SandboxMode,
    SwiftyError,
    Tool,
    UsageError,
    decide,
    find_project,
    load_policy,
    local_rules_path,
    suggest_rules,
)
from swifty_sandbox.policy.agents import user_settings
from swifty_sandbox.policy.engine import Host, always_allows
from swifty_sandbox.policy.errors import ExitCode
from swifty_sandbox.policy.limits import default_max_memory, default_max_processes
from swifty_sandbox.policy.paths import is_within
from swifty_sandbox.policy.store import add_allowed_host, add_rules

if TYPE_CHECKING:
    from swifty_sandbox.policy.network import NetworkPolicy


from ..run.executor import DEVNULL, EXIT_TIMEOUT, Completed, OnOutput

if TYPE_CHECKING:
    from ..spec.compiler import Limits, SandboxSpec

# What only a run, a spec or a file tool's host facts need (the compiler, the run
# lifecycle, the backends) is imported where it is used: a cold `check` or `hook`
# compiles no spec and pays nothing for them.

RequestLike = Request | str | Sequence[str]
EXIT_DENIED = ExitCode.DENIED


class Answer(enum.Enum):
    """A person's answer to an ask."""

    YES = "yes"
    NO = "no"
    ALWAYS = "always"


Asker = Callable[[Request, Decision], Answer]
HostAsker = Callable[[str, int], Answer]  # a host:port not in the network allowlist


@dataclass(frozen=True, slots=True)
class RunResult:
    """What `run` returns; `as_json()` is SPEC §4's `run --json` object."""

    exit_code: int
    stdout: str
    stderr: str
    truncated: bool
    timed_out: bool
    duration_ms: int
    decision: Decision
    is_error: bool  # denied, not confined, or timed out: the agent should change course
    # A run through the network proxy: each destination asked for, {host, port, allowed}.
    network: tuple[dict[str, object], ...] | None = None
    backend: str | None = None  # confined runs on Linux: "bwrap" or "landlock"
    # What the sandbox refused the command ({kind, op, path | host, rule, fix}), bounded
    # and de-duplicated (sandbox/agents/refusals.py); also said on stderr, one per path.
    violations: tuple[dict[str, object], ...] = ()
    # Whether the command was started: False when it was denied or the sandbox could
    # not be set up (125), so `decision` (what the policy said) is not read as "it ran".
    # A command that exits 125 itself ran: only our own set-up failure says otherwise.
    ran: bool = True

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "exit_code": self.exit_code, "stdout": self.stdout, "stderr": self.stderr,
            "truncated": self.truncated, "timed_out": self.timed_out,
            "duration_ms": self.duration_ms, "decision": self.decision.as_json(),
            "is_error": self.is_error, "ran": self.ran,
        }
        if self.network is not None:
            out["network"] = list(self.network)
        if self.backend is not None:
            out["backend"] = self.backend
        out["violations"] = list(self.violations)
        return out


def request_from_json(value: object) -> Request:
    """A request as agents and batch files write it: a JSON string (a shell command),
    or `{"tool": "Bash", "command" | "argv"}` / `{"tool": "ReadFile"…, "path"}`."""
    if isinstance(value, str):
        return Request.bash(value)
    if isinstance(value, dict):
        tool = Tool.parse(str(value.get("tool", "Bash")))
        if tool is Tool.BASH:
            if isinstance(value.get("command"), str):
                return Request.bash(value["command"])
            argv = value.get("argv")
            if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
                return Request.bash_argv(argv)
            raise ValueError("a Bash request needs `command` (a string) or `argv` (strings)")
        if tool is not None and isinstance(value.get("path"), str):
            return Request.file(tool, value["path"])
    raise ValueError("`tool` must be Bash, ReadFile, WriteFile or EditFile, with its "
                     "`command` or `path`")


def as_request(request: RequestLike) -> Request:
    """A shell string is a Bash command; a sequence of strings is an argv."""
    if isinstance(request, Request):
        return request
    if isinstance(request, str):
        return Request.bash(request)
    return Request.bash_argv(tuple(request))


class Sandbox:
    """The policy of one project, loaded once, deciding many requests.

    `project` defaults to the git top-level of the current directory, else the
    current directory; `home` to the user's home. `mode` and `sandbox_mode`
    override the settings files, as the command-line options do. `ask` answers the
    requests that need a person; without it they are denied.
    """

    def __init__(
        self,
        project: str | Path | None = None,
        *,
        home: str | Path | None = None,
        mode: Mode | str | None = None,
        sandbox_mode: SandboxMode | str | None = None,
        ask: Asker | None = None,
        allow_net: Sequence[str] = (),
        ask_host: HostAsker | None = None,
        backend: str | None = None,
        surface: str = "api",
    ) -> None:
        self.backend = backend  # Linux: auto | bwrap | landlock (sandbox/run/selection.py)
        self.surface = surface  # who asks, for the session log: run, check, hook:claude…
        self.project = find_project(_project_dir(project))
        self._home = Path(home) if home is not None else None
        self.mode = Mode(mode) if mode is not None else None
        self.sandbox_mode = SandboxMode(sandbox_mode) if sandbox_mode is not None else None
        self.ask = ask  # None: nobody to ask (non-interactive), so an ask is denied
        self.policy: Policy = load_policy(self.project, self._home)
        self._host: Host | None = None
        # `--allow-net` entries, checked now (a bad one is a usage error, not a run)
        self.allow_net = tuple(allow_net)
        self.ask_host = ask_host  # None: an unlisted host is refused
        self.network()

    def network(self) -> NetworkPolicy | None:
        """The run's allowlist: the settings' `network:` and `allow_net`; None when
        there is none (no proxy, and nothing of it imported: `check` stays fast)."""
        settings = self.policy.settings
        allow, deny = (*settings.network_allow, *self.allow_net), settings.network_deny
        if not allow and not deny:
            return None
        # The network policy's tables cost start-up time a run without `network:` skips.
        from swifty_sandbox.policy.network import NetworkEntryError, build

        try:
            return build(allow, deny)
        except NetworkEntryError as e:
            raise UsageError(str(e)) from e

    def always_allow_host(self, entry: str) -> bool:
        """Add a network.allow entry to the user's own config (`~/.swifty/config.yaml`)."""
        return add_allowed_host(self.policy.files, entry)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Settings that were ignored because a committed file tried to loosen them."""
        return self.policy.warnings

    def check(self, request: RequestLike) -> Decision:
        """The decision for one request; nothing runs. Every surface (the CLI's `check`,
        `serve`, the hooks, the MCP server) asks here, so each decides alike."""
        request = as_request(request)
        decision = self._decide(request)
        self._record(request, decision)
        return decision

    def _record_ready(self) -> None:
        """The log made before a confined command runs: a missing log directory in a
        root the command may write (`$XDG_STATE_HOME` in the project) could be made by
        the command, a forged log in it; once it exists it is protected and hidden."""
        if self.policy.settings.log_enabled:
            from .sessionlog import ready  # as in `_record`: loaded when it records

            ready(self.policy)

    def _decide(self, request: Request) -> Decision:
        host = self.host() if request.tool is not Tool.BASH else None
        return decide(self.policy, request, self.mode, self.sandbox_mode, host)

    def _record(self, request: Request, decision: Decision,
                result: RunResult | None = None) -> None:
        """The session log's one entry point: every decision (`check`, `resolve`) and
        every run (`run`, denied or not) of every surface passes here."""
        if not self.policy.settings.log_enabled:
            return
        from .sessionlog import record  # only a recording call loads the writer

        record(self.policy, self.surface, request, decision,
               result.as_json() if result is not None else None)

    def host(self) -> Host:
        """What this machine runs outside the sandbox, for file-tool decisions (found on
        first use, again after a reload): where a PATH lookup of what runs by name outside
        may land (`pathguard.HOST_PROGRAMS`: the hooks' `swifty-sandbox`, the agents'
        `git`, `rg`, `node`, shell), the trees of the interpreter, this package and
        bwrap, the user's agent settings where this environment's agents read them, and
        the hidden files with other hard links (listed only when a file with several is asked)."""
        if self._host is None:
            # start-up: only a file tool's decision or an explained refusal needs these
            from ..landlock.held import identities as held_identities
            from ..spec.agentexec import marketplaces, programs
            from ..spec.compiler import hidden_links
            from ..spec.gitfiles import trusted_by_git
            from ..spec.pathguard import host_paths, trusted_paths

            policy = self.policy
            self._host = Host(
                tuple(dict.fromkeys(name for p in (
                    *host_paths(os.environ.get("PATH"), str(policy.project)),
                    # What the agents' settings run (hook scripts, MCP servers): the
                    # agent's own file tools must not rewrite them either.
                    *programs(str(policy.project), str(policy.home),
                              os.environ.get("PATH"), policy.roots))
                    for name in (p, os.path.realpath(p)))),
                # Trees run outside whole: ours, and Claude Code's local plugin
                # marketplaces (read in place at each start).
                (*trusted_paths(policy.settings.bwrap),
                 *(name for p in marketplaces(str(policy.project), str(policy.home))
                   for name in dict.fromkeys((p, os.path.realpath(p))))),
                tuple(dict.fromkeys(name for p in user_settings(os.environ, policy.home)
                                    for name in (str(p), os.path.realpath(p)))),
                # Asked again each time (rarely: a file with several links): a long-lived
                # serve must see a hard link made since the last request.
                lambda: hidden_links(policy),
                # Asked per request: a repository's config can name new hooks any time.
                lambda path: trusted_by_git(path, str(policy.home)),
                # Asked per read: what a Landlock command running now moved away.
                lambda: held_identities(str(policy.home)))
        return self._host

    def can_always(self, request: RequestLike) -> bool:
        """Whether "always" may be offered for this request's ask: the rule it writes
        would allow it (`policy.engine.always_allows`; not for a command the analysis
        could not see into, plan mode's cap, …). Every surface that lists the choices
        asks here."""
        request = as_request(request)
        host = self.host() if request.tool is not Tool.BASH else None
        return always_allows(self.policy, request, self.mode, self.sandbox_mode, host)

    def always_allow(self, request: RequestLike) -> list[str]:
        """Record "always allow" for the request in the local rule file; returns the
        rules added. The policy is reloaded, so the next check sees them."""
        rules = suggest_rules(self.policy, as_request(request))
        added = add_rules(local_rules_path(self.policy.project, self.policy.home), rules,
                          Effect.ALLOW,
                          project=self.policy.project, home=self.policy.home)
        self.reload()
        return added

    def reload(self) -> None:
        """Read the settings, profile and rule files again (they changed on disk)."""
        self.policy = load_policy(self.project, self._home)
        self._host = None

    @property
    def effective_mode(self) -> Mode:
        return self.mode or self.policy.settings.default_mode

    @property
    def effective_sandbox_mode(self) -> SandboxMode:
        return self.sandbox_mode or self.policy.settings.sandbox_mode

    def spec(self, cwd: str | None = None, limits: Limits | None = None) -> SandboxSpec:
        """The sandbox a command would run in now."""
        import dataclasses

        # the backend choice, loaded when a spec is made (check's start-up path)
        from ..run.selection import chosen
        from ..spec.compiler import compile_spec  # start-up: `check` compiles no spec

        spec = compile_spec(self.policy, self.effective_mode, cwd, limits)
        return dataclasses.replace(spec, backend=chosen(self.backend, spec.backend))

    def resolve(self, request: RequestLike, *, ask: Asker | None = None) -> Decision:
        """`check`, then settle an ask with the asker (or deny it without one).

        `ask`: the asker for this call only, instead of `self.ask` (concurrent callers,
        such as `serve`'s requests, each answer their own asks)."""
        request = as_request(request)
        decision = self._resolve(request, ask)
        self._record(request, decision)
        return decision

    def _resolve(self, request: Request, ask: Asker | None) -> Decision:
        decision = self._decide(request)
        if decision.effect is not Effect.ASK:
            return decision
        ask = ask if ask is not None else self.ask
        if ask is None:
            return replace(decision, effect=Effect.DENY, reason=t(
                "decision.noninteractive", reason=decision.reason,
                how=self.how_to_allow(request, decision)))
        answer = ask(request, decision)
        if answer is Answer.NO:
            return replace(decision, effect=Effect.DENY,
                           reason=t("decision.user_denied", reason=decision.reason))
        if answer is Answer.ALWAYS and self.can_always(request):
            self.always_allow(request)
        elif answer is Answer.ALWAYS:
            pass  # no rule would allow it (it was not offered): yes, this once
        elif answer is not Answer.YES:
            assert_never(answer)
        return replace(decision, effect=Effect.ALLOW,
                       reason=t("decision.user_allowed", reason=decision.reason))

    def how_to_allow(self, request: Request, decision: Decision) -> str:
        """The ways to let an ask through without a person: the exact rule to add,
        `--sandbox auto` when only the mode asked for a command, a terminal."""
        ways = []
        rules = suggest_rules(self.policy, request) if self.can_always(request) else []
        if rules:
            ways.append(t("how.rule", rules=", ".join(f"`{r}`" for r in rules),
                          file=local_rules_path(self.policy.project, self.policy.home)))
        if (request.tool is Tool.BASH and decision.layer is Layer.MODE
                and self.effective_sandbox_mode is not SandboxMode.AUTO
                and self.effective_mode is not Mode.PLAN):
            ways.append(t("how.auto"))
        ways.append(t("how.terminal"))
        return t("how.or").join(ways)

    def run(
        self,
        request: RequestLike,
        *,
        timeout: float | None = None,
        cwd: str | Path | None = None,
        capture: bool = True,
        stdin: int | IO[bytes] | None = DEVNULL,
        output_bytes: int = 1 << 20,
        memory_bytes: int | None = None,
        processes: int | None = None,
        ask: Asker | None = None,
        ask_host: HostAsker | None = None,
        on_output: OnOutput | None = None,
    ) -> RunResult:
        """Decide, then run confined. Never raises for the command's own failures:
        denied → 126, confinement impossible → 125, timeout → 124.

        `ask`: the asker for this call only (see `resolve`); `ask_host` likewise for
        hosts outside the network allowlist ("always" adds them to the user's config).

        `memory_bytes`, `processes`: caps for this command; None takes the settings'
        (`sandbox.limits`), else the defaults (confined runs only); 0 is no cap.

        `on_output(stream, data)`: the captured output as it arrives ("stdout" or
        "stderr", at most 8 KiB a call, the first `output_bytes` of each stream); it
        blocking holds the command back. The result is the same with or without it."""
        request = as_request(request)
        if request.tool is not Tool.BASH:
            raise ValueError("run() takes a Bash request; file tools are only checked")
        result = self._run(request, timeout=timeout, cwd=cwd, capture=capture, stdin=stdin,
                           output_bytes=output_bytes, memory_bytes=memory_bytes,
                           processes=processes, ask=ask, ask_host=ask_host,
                           on_output=on_output)
        self._record(request, result.decision, result)
        return result

    def _run(self, request: Request, *, timeout: float | None, cwd: str | Path | None,
             capture: bool, stdin: int | IO[bytes] | None, output_bytes: int,
             memory_bytes: int | None, processes: int | None, ask: Asker | None,
             ask_host: HostAsker | None, on_output: OnOutput | None) -> RunResult:
        # start-up: the run lifecycle and the compiler, for a run only (not `check`)
        from ..run.launch import run_unconfined, shell_argv
        from ..run.selection import run_selected
        from ..spec.compiler import EXIT_SETUP, SetupError

        decision = self._resolve(request, ask)
        if decision.effect is not Effect.ALLOW:
            return _failed(EXIT_DENIED, decision.reason, decision)
        command = shell_argv(request.command) if request.command is not None \
            else list(request.argv or ())
        workdir = self._workdir(cwd)
        limits = self._limits(timeout, output_bytes, memory_bytes, processes)
        try:
            if self.effective_sandbox_mode is SandboxMode.OFF:
                done = run_unconfined(command, cwd=workdir, limits=limits, capture=capture,
                                      stdin=stdin, on_output=on_output)
            else:
                host_ask = ask_host if ask_host is not None else self.ask_host
                kept: list[str] = []
                self._record_ready()
                done = run_selected(self.spec(workdir, limits), command, capture=capture,
                                    stdin=stdin, network=self.network(),
                                    ask_host=self._host_answers(host_ask, kept),
                                    on_output=on_output)
                if kept:  # "always": the next run here reads it
                    self.reload()
        except SetupError as e:
            return _failed(EXIT_SETUP, e.diagnostics(), decision)
        return _result(done, decision, timeout, self.policy,
                       self.host() if done.violations else None)

    def run_spec(self, cwd: str | Path | None = None, *, timeout: float | None = None,
                 output_bytes: int = 1 << 20) -> SandboxSpec:
        """The spec `run` would confine a command in here (its working directory and
        caps), for `compile` to show what runs (the session log made first, as `run`
        makes it, so that its hidden directory is in both)."""
        self._record_ready()
        return self.spec(self._workdir(cwd),
                         self._limits(timeout, output_bytes, None, None))

    def _workdir(self, cwd: str | Path | None) -> str:
        """Where a command runs: `cwd`, else this directory inside the project, else
        the project."""
        if cwd is not None:
            return str(cwd)
        here = _cwd() or str(self.project)
        return here if is_within(here, str(self.project)) else str(self.project)

    def _host_answers(self, ask: HostAsker | None, kept: list[str]
                      ) -> Callable[[str, int], bool] | None:
        """The proxy's yes/no; "always" is written to the user's config at once (the
        next run reads it; this one has its answer)."""
        if ask is None:
            return None

        def answer(host: str, port: int) -> bool:
            said = ask(host, port)
            if said is Answer.ALWAYS:
                from ..net.netproxy import suggestion  # only an asked host loads the proxy

                entry = suggestion(host, port)
                try:
                    self.always_allow_host(entry)
                    kept.append(entry)
                except SwiftyError:  # not kept (a file it cannot extend): yes this once
                    pass
            return said is not Answer.NO

        return answer

    def _limits(self, timeout: float | None, output_bytes: int, memory_bytes: int | None,
                processes: int | None) -> Limits:
        """Caps given here, else the settings', else — when confined — the defaults."""
        settings = self.policy.settings
        memory = memory_bytes if memory_bytes is not None else settings.max_memory
        count = processes if processes is not None else settings.max_processes
        required = count is not None  # asked for: a process cap may be unenforceable
        if self.effective_sandbox_mode is not SandboxMode.OFF:
            memory = default_max_memory() if memory is None else memory
            count = default_max_processes() if count is None else count
        from ..spec.compiler import Limits  # start-up: for a run only

        return Limits(timeout, output_bytes, memory or None, count or None, required)


def _cwd() -> str | None:
    """The working directory, resolved; None when it has been deleted."""
    try:
        return os.path.realpath(os.getcwd())
    except FileNotFoundError:
        return None


def _project_dir(project: str | Path | None) -> Path:
    """The directory to start from; a missing one, or a FIFO or file, is an error (its
    policy files would otherwise silently not be found)."""
    if project is None:
        here = _cwd()
        if here is None:
            raise UsageError(t("project.no_cwd"))
        return Path(here)
    try:
        info = os.stat(project)
    except (OSError, ValueError) as e:
        raise UsageError(t("project.missing", path=project,
                           error=getattr(e, "strerror", None) or e)) from e
    if not stat.S_ISDIR(info.st_mode):
        raise UsageError(t("project.not_dir", path=project))
    return Path(project)


def _failed(code: int, message: str, decision: Decision) -> RunResult:
    """Nothing ran: denied (126) or the sandbox could not be set up (125)."""
    return RunResult(code, "", message + "\n", False, False, 0, decision, True, ran=False)


def _result(done: Completed, decision: Decision, timeout: float | None,
            policy: Policy, host: Host | None = None) -> RunResult:
    stderr = done.stderr.decode(errors="replace")
    violations: tuple[dict[str, object], ...] = ()
    if done.violations:
        from .refusals import explain, lines  # only a run something was refused

        violations = explain(policy, done.violations, host)
        stderr += lines([v for v, found in zip(violations, done.violations, strict=True)
                         if not found.get("said")])
    if done.timed_out:
        stderr += t("run.timeout", seconds=timeout) + "\n"
    return RunResult(
        exit_code=EXIT_TIMEOUT if done.timed_out else done.exit_code,
        stdout=done.stdout.decode(errors="replace"), stderr=stderr,
        truncated=done.truncated, timed_out=done.timed_out, duration_ms=done.duration_ms,
        decision=decision, is_error=done.timed_out, network=done.network,
        backend=done.backend, violations=violations,
    )


__all__ = ["EXIT_DENIED", "Answer", "Asker", "HostAsker", "RunResult", "Sandbox", "as_request",
           "request_from_json"]
