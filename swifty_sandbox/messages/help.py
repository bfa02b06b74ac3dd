"""The command line's help: each command's text and each option's, with their
placeholders (`cli/texts.py` looks them up when they are shown). Command and option
names, rule text, file names and JSON keys stay as they are."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    # -- the group ----------------------------------------------------------------------
    "help.main": (
        "Confine the shell commands and file operations of an AI coding agent.",
        "限制 AI 编程智能体的 shell 命令和文件操作。",
    ),
    "help.version": ("Show the version and exit.", "显示版本并退出。"),
    # -- shared options -----------------------------------------------------------------
    "help.project": (
        "Project root (default: the git top-level of the current directory, else it).",
        "项目根目录（默认：当前目录所在的 git 顶层目录，否则为当前目录）。",
    ),
    "help.mode": (
        "Permission mode (default: permissions.defaultMode from config.yaml).",
        "权限模式（默认：config.yaml 中的 permissions.defaultMode）。",
    ),
    "help.sandbox": (
        "auto: confined and auto-allowed; manual: confined, asks stay; off: UNCONFINED.",
        "auto：受限运行并自动允许；manual：受限运行，保留询问；off：完全不受限制。",
    ),
    "help.json": ("Print JSON.", "输出 JSON。"),
    "help.backend": (
        "Linux: bwrap (namespaces), landlock (where namespaces are refused), or auto "
        "(bwrap where it can, else Landlock; default: $SWIFTY_BACKEND, then "
        "sandbox.backend).",
        "Linux：bwrap（命名空间）、landlock（无法使用命名空间时）或 auto（能用 bwrap 时用 "
        "bwrap，否则用 Landlock；默认：$SWIFTY_BACKEND，其次 sandbox.backend）。",
    ),
    "help.allow_net": (
        "Let the command reach HOST through the egress proxy (repeatable): a name, "
        "*.domain, HOST:PORT, an IP or CIDR, or a preset (@pypi, @npm, @crates, @go, "
        "@github, @rubygems, @maven). Adds to network.allow in config.yaml.",
        "允许命令经出口代理访问该主机（可重复）：主机名、*.domain、主机:端口、IP 或 CIDR，"
        "或预设（@pypi、@npm、@crates、@go、@github、@rubygems、@maven）。追加到 "
        "config.yaml 的 network.allow。",
    ),
    # -- placeholders -------------------------------------------------------------------
    "help.meta.dir": ("DIR", "目录"),
    "help.meta.host": ("HOST", "主机"),
    "help.meta.seconds": ("SECONDS", "秒数"),
    "help.meta.n": ("N", "数量"),
    "help.meta.size": ("SIZE", "大小"),
    "help.meta.command": ("COMMAND", "命令"),
    "help.meta.file": ("FILE", "文件"),
    "help.meta.image": ("IMAGE", "镜像"),
    "help.meta.args": ("[CMD ARG]...", "[命令 参数]..."),
    "help.meta.paths": ("[PATH]...", "[路径]..."),
    "help.meta.agent": ("AGENT", "智能体"),
    "help.meta.which": ("[WHICH]", "[种类]"),
    "help.meta.command_word": ("COMMAND [ARGS]...", "命令 [参数]..."),
    "help.meta.since": ("WHEN", "时间"),
    "help.since": (
        "Only records since a duration ago (10m, 2h, 3d) or a time (2026-12-02T01:30).",
        "只显示一段时长之前（10m、2h、3d）或某个时间（2026-12-02T01:30）以来的记录。",
    ),
    "help.log": (
        "Show the session log: every decision and confined run in this project.\n\n"
        "\b\n"
        "  swifty-sandbox log --since 2h\n"
        "  swifty-sandbox log --json | jq 'select(.decision.effect == \"deny\")'\n"
        "  swifty-sandbox log --follow",
        "显示会话日志：此项目中的每个决定和每次受限运行。\n\n"
        "\b\n"
        "  swifty-sandbox log --since 2h\n"
        "  swifty-sandbox log --json | jq 'select(.decision.effect == \"deny\")'\n"
        "  swifty-sandbox log --follow",
    ),
    "help.log.follow": (
        "Keep printing new records as they are appended (like tail -f).",
        "持续输出新追加的记录（类似 `tail -f`）。",
    ),
    "help.report": (
        "Write the session log as one HTML page: a timeline of commands, decisions, "
        "violations and network destinations, filterable; no network needed to view it.",
        "把会话日志写成一个 HTML 页面：命令、决定、违规和网络目标的时间线，可筛选；查看时"
        "无需网络。",
    ),
    "help.report.output": ("The HTML file to write.", "要写入的 HTML 文件。"),
    # -- run ----------------------------------------------------------------------------
    "help.run": (
        "Run a command confined: no network, writes only in the project and temp dirs.\n\n"
        "Exit status: the command's own; 127 command not found; 126 denied by policy (or "
        "not executable: then `--json`'s `decision` is `\"allow\"`); 125 the sandbox could not "
        "be set up (`--json`: `\"ran\": false`); 124 timeout; 130 interrupted (Ctrl-C); 2 a "
        "usage error, a broken rule or config file, or a project directory that does not "
        "exist.\n\n"
        "\b\n"
        "  swifty-sandbox run -- npm test\n"
        "  swifty-sandbox run -c 'make && ./bin/check'",
        "受限运行一条命令：无网络，只能写入项目和临时目录。\n\n"
        "退出状态：命令自己的状态；127 找不到命令；126 被策略拒绝（或不可执行：此时 "
        "`--json` 的 `decision` 为 `\"allow\"`）；125 无法建立沙箱（`--json` 的 "
        "`\"ran\": false`）；"
        "124 超时；130 被中断（Ctrl-C）；2 用法错误、规则或配置文件有误，或项目目录不存在。\n\n"
        "\b\n"
        "  swifty-sandbox run -- npm test\n"
        "  swifty-sandbox run -c 'make && ./bin/check'",
    ),
    "help.run.timeout": ("Wall-clock limit in seconds (exit 124).",
                         "以秒计的运行时间上限（超时退出码 124）。"),
    "help.run.max_processes": (
        "Cap on the command's processes and threads, or `unlimited` (default: "
        "sandbox.limits.processes, else 1024 or 32 per CPU).",
        "命令的进程和线程数上限，或 `unlimited`（默认：sandbox.limits.processes，否则为 "
        "1024 或每个 CPU 32 个）。",
    ),
    "help.run.max_memory": (
        "Cap on the command's memory: 4G, 512M, 50% (of physical memory) or `unlimited` "
        "(default: sandbox.limits.memory, else 75%).",
        "命令的内存上限：4G、512M、50%（物理内存的比例）或 `unlimited`（默认："
        "sandbox.limits.memory，否则为 75%）。",
    ),
    "help.run.command": ("A shell command string (run with bash -c).",
                         "一条 shell 命令字符串（用 bash -c 运行）。"),
    "help.run.approved": (
        "A person already approved this command in the agent's own prompt (written by "
        "`hook claude-code`): an ask runs, a deny still holds.",
        "已有人在智能体自己的提示中批准了此命令（由 `hook claude-code` 写入）：询问项直接"
        "运行，拒绝项仍然拒绝。",
    ),
    # -- check --------------------------------------------------------------------------
    "help.check": (
        "Decide a request: exit 0 allow, 1 deny, 3 ask, 2 error.\n\n"
        "\b\n"
        "  swifty-sandbox check -- git push --force\n"
        "  swifty-sandbox check -c 'git status && npm test'\n"
        "  swifty-sandbox check --tool ReadFile .env",
        "判定一个请求：退出码 0 允许，1 拒绝，3 询问，2 出错。\n\n"
        "\b\n"
        "  swifty-sandbox check -- git push --force\n"
        "  swifty-sandbox check -c 'git status && npm test'\n"
        "  swifty-sandbox check --tool ReadFile .env",
    ),
    "help.check.batch": ("JSON lines: one command per line.", "JSON Lines：每行一条命令。"),
    "help.check.command": ("A shell command string.", "一条 shell 命令字符串。"),
    "help.check.tool": ("Bash, ReadFile, WriteFile or EditFile (aliases Read, Write, Edit).",
                        "Bash、ReadFile、WriteFile 或 EditFile（别名 Read、Write、Edit）。"),
    # -- audit, policy, schema ----------------------------------------------------------
    "help.audit": (
        "Lint rule and config files: exit 0 clean, 1 findings, 2 error.\n\n"
        "Without PATHs: the project's and your own .swifty files.",
        "检查规则和配置文件：退出码 0 无问题，1 有发现，2 出错。\n\n"
        "不给路径时：检查项目的和你自己的 .swifty 文件。",
    ),
    "help.audit.format": ("Output format.", "输出格式。"),
    "help.audit.json": ("Same as --format json.", "同 --format json。"),
    "help.audit.strict": ("Warnings fail too (exit 1).", "警告也算失败（退出码 1）。"),
    "help.policy": ("Inspect the effective policy.", "查看生效的策略。"),
    "help.policy.show": (
        "Every rule of the three layers, highest priority first, and which later rule of "
        "the same file shadows it — for \"why was this allowed?\".",
        "三个层级的每条规则，优先级高的在前，以及同一文件中哪条后面的规则覆盖了它——用于"
        "回答“为什么这被允许了？”。",
    ),
    "help.schema": (
        "Print the JSON Schema of permissions*.yaml, config.yaml or a profile (for "
        "editors: `# yaml-language-server: $schema=…`).",
        "输出 permissions*.yaml、config.yaml 或配置档的 JSON Schema（供编辑器使用："
        "`# yaml-language-server: $schema=…`）。",
    ),
    # -- compile ------------------------------------------------------------------------
    "help.compile": (
        "Print the sandbox the policy compiles to, for any platform: the bwrap argv (for "
        "COMMAND after `--`, else a placeholder), the seccomp filter as BPF bytes or "
        "readable PFC text, or the seatbelt profile (its parameter values on stderr); "
        "`oci` writes a runtime bundle (runc, crun) to --bundle DIR, `oci-seccomp` "
        "prints the OCI `linux.seccomp` object (docker/podman `--security-opt "
        "seccomp=FILE`), `kubernetes` a Job and a NetworkPolicy as YAML. With --json: "
        "`{\"target\", \"argv\"}`, `{\"target\", \"pfc\"}`, `{\"target\", \"bpf_base64\"}`, "
        "`{\"target\", \"profile\", \"params\", \"argv\"}`, `{\"target\", \"bundle\", "
        "\"config\"}`, `{\"target\", \"seccomp\"}` or `{\"target\", \"objects\", "
        "\"seccomp_profile\"}`.",
        "输出策略为任一平台编译出的沙箱：bwrap 的命令行（针对 `--` 之后的命令，否则为占位"
        "符）、BPF 字节或可读 PFC 文本形式的 seccomp 过滤器，或 seatbelt 配置（其参数值输出"
        "到 stderr）；`oci` 将运行时包（供 runc、crun 使用）写入 --bundle 目录，`oci-seccomp` "
        "输出 OCI 的 `linux.seccomp` 对象（docker/podman `--security-opt seccomp=FILE`），"
        "`kubernetes` 以 YAML 输出 Job 和 NetworkPolicy。使用 --json 时："
        "`{\"target\", \"argv\"}`、`{\"target\", \"pfc\"}`、`{\"target\", \"bpf_base64\"}`、"
        "`{\"target\", \"profile\", \"params\", \"argv\"}`、`{\"target\", \"bundle\", "
        "\"config\"}`、`{\"target\", \"seccomp\"}` 或 `{\"target\", \"objects\", "
        "\"seccomp_profile\"}`。",
    ),
    "help.compile.target": (
        "What to print (default: the backend's own: bwrap, or landlock with --backend "
        "landlock).",
        "要输出什么（默认：后端自己的：bwrap，或在 --backend landlock 时为 landlock）。",
    ),
    "help.compile.bundle": (
        "oci: the bundle directory to write; kubernetes: where to write the seccomp "
        "profile for the nodes.",
        "oci：要写入的运行时包目录；kubernetes：为节点写入 seccomp 配置的位置。",
    ),
    "help.compile.image": ("kubernetes: the container image.", "kubernetes：容器镜像。"),
    # -- doctor -------------------------------------------------------------------------
    "help.doctor": (
        "Check this platform's sandbox (bubblewrap, namespaces and seccomp on Linux; "
        "sandbox-exec on macOS) and every agent hook installed for this project or user "
        "(it runs, it is on every event, the agent runs it: Codex's trust); exit 0 when "
        "`run` can confine and every installed hook works.",
        "检查本平台的沙箱（Linux 上的 bubblewrap、命名空间和 seccomp；macOS 上的 "
        "sandbox-exec）以及为此项目或用户安装的每个智能体钩子（能否运行、是否覆盖每个事件、"
        "智能体是否运行它：Codex 的信任）；当 `run` 能够限制命令且每个已安装的钩子都正常"
        "时退出码为 0。",
    ),
    "help.doctor.fix": (
        "As `root`: write the AppArmor profile that lets this bwrap make namespaces (Ubuntu "
        "24.04+), after showing it, and load it.",
        "以 `root` 身份：先显示、再写入并加载允许此 bwrap 创建命名空间的 AppArmor 配置"
        "（Ubuntu 24.04+）。",
    ),
    # -- hook, init ---------------------------------------------------------------------
    "help.hook": (
        "Answer AGENT's pre-tool hook: its JSON on stdin, our decision on stdout.\n\n"
        "\b\n"
        "  claude-code  PreToolUse: allow | deny | ask; an allowed Bash command is\n"
        "               rewritten to run confined through `swifty-sandbox run`\n"
        "  codex        PreToolUse (Bash): deny with the reason, or no objection\n"
        "  gemini       BeforeTool (run_shell_command): {\"decision\", \"reason\"}\n"
        "  cursor       beforeShellExecution: {\"permission\", \"user_message\", "
        "\"agent_message\"}\n"
        "Broken input or any error blocks the tool call (exit 2, the reason on stderr).\n"
        "Installed by `swifty-sandbox init AGENT`.",
        "回答该智能体的工具调用前钩子：stdin 上是它的 JSON，stdout 上是我们的决定。\n\n"
        "\b\n"
        "  claude-code  PreToolUse：`allow` | `deny` | `ask`；被允许的 Bash 命令\n"
        "               改写为经 `swifty-sandbox run` 受限运行\n"
        "  codex        PreToolUse（Bash）：带原因拒绝，或不反对\n"
        "  gemini       BeforeTool（run_shell_command）：{\"decision\", \"reason\"}\n"
        "  cursor       beforeShellExecution：{\"permission\", \"user_message\", "
        "\"agent_message\"}\n"
        "输入有误或出现任何错误都会阻止该工具调用（退出码 2，原因在 stderr）。\n"
        "由 `swifty-sandbox init AGENT` 安装。",
    ),
    "help.init": (
        "Install the swifty-sandbox hook into AGENT's settings, showing the diff.\n\n"
        "\b\n"
        "  claude-code  .claude/settings.json   (PreToolUse)\n"
        "  codex        .codex/hooks.json       (PreToolUse)\n"
        "  gemini       .gemini/settings.json   (BeforeTool)\n"
        "  cursor       .cursor/hooks.json      (beforeShellExecution)\n"
        "(Your \"always allow\" rules live in ~/.swifty/projects/, outside the project, so\n"
        "nothing needs adding to .gitignore.)",
        "把 swifty-sandbox 钩子安装到该智能体的设置中，并显示差异。\n\n"
        "\b\n"
        "  claude-code  .claude/settings.json   (PreToolUse)\n"
        "  codex        .codex/hooks.json       (PreToolUse)\n"
        "  gemini       .gemini/settings.json   (BeforeTool)\n"
        "  cursor       .cursor/hooks.json      (beforeShellExecution)\n"
        "（你的“总是允许”规则保存在项目之外的 ~/.swifty/projects/ 中，\n"
        "因此无需向 .gitignore 添加任何内容。）",
    ),
    "help.init.user": (
        "Install in your own settings (~/.claude, ~/.codex, …) for every project, instead "
        "of the project's.",
        "安装到你自己的设置中（~/.claude、~/.codex 等），对所有项目生效，而不是项目的设置。",
    ),
    # -- mcp, serve ---------------------------------------------------------------------
    "help.mcp": (
        "Serve MCP over stdio: `bash` (confined), `read_file`, `write_file`, `edit_file`.\n\n"
        "\b\n"
        "Every call is decided by the project's policy; a denial is an isError result with\n"
        "the reason; an ask uses MCP elicitation when the client offers it.\n"
        "  claude mcp add swifty -- swifty-sandbox mcp --project .",
        "通过 stdio 提供 MCP 服务：`bash`（受限）、`read_file`、`write_file`、`edit_file`。\n\n"
        "\b\n"
        "每次调用都由项目的策略判定；拒绝是带原因的 `isError` 结果；\n"
        "客户端支持时，询问通过 MCP 征询进行。\n"
        "  claude mcp add swifty -- swifty-sandbox mcp --project .",
    ),
    "help.serve": (
        "Run requests from stdin, one JSON object per line, answering on stdout.\n\n"
        "\b\n"
        "  {\"id\": 1, \"tool\": \"Bash\", \"command\": \"npm test\", \"timeout\": 300}\n"
        "  {\"id\": 2, \"tool\": \"ReadFile\", \"path\": \".env\"}\n"
        "An ask becomes {\"id\", \"type\": \"permission_request\", …}; answer it with\n"
        "{\"id\", \"type\": \"permission_response\", \"allow\": true, \"always\": false}.\n"
        "Requests may be pipelined; answers come as they finish (match them by id).\n"
        "Closing stdin kills the commands still running. See docs/protocol.md.",
        "从 stdin 读取请求（每行一个 JSON 对象），在 stdout 上回答。\n\n"
        "\b\n"
        "  {\"id\": 1, \"tool\": \"Bash\", \"command\": \"npm test\", \"timeout\": 300}\n"
        "  {\"id\": 2, \"tool\": \"ReadFile\", \"path\": \".env\"}\n"
        "询问会变成 {\"id\", \"type\": \"permission_request\", …}；用\n"
        "{\"id\", \"type\": \"permission_response\", \"allow\": true, \"always\": false} 回答。\n"
        "请求可以连续发送；回答按完成顺序返回（按 `id` 对应）。\n"
        "关闭 stdin 会结束仍在运行的命令。参见 docs/protocol.md。",
    ),
}
