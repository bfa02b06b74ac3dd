"""Network by allowlist: entries, the egress proxy, its blocked lines and events."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "net.bad_host": (
        "`{host}` is not a host name or IP address",
        "`{host}` 不是主机名或 IP 地址",
    ),
    "net.bad_port": (
        "`{entry}`: the port must be a number from 1 to 65535",
        "`{entry}`：端口必须是 1 到 65535 之间的数字",
    ),
    "net.bad_url": (
        "`{entry}`: write the host only (`example.com` or `example.com:443`), not a URL",
        "`{entry}`：只写主机（`example.com` 或 `example.com:443`），不要写 URL",
    ),
    "net.bad_cidr": (
        "`{entry}` is not a valid CIDR range (such as 10.0.0.0/8 or fd00::/8)",
        "`{entry}` 不是有效的 CIDR 范围（例如 10.0.0.0/8 或 fd00::/8）",
    ),
    "net.bad_wildcard": (
        "`{entry}`: a wildcard is `*` alone or `*.domain` (its subdomains)",
        "`{entry}`：通配符只能是单独的 `*` 或 `*.domain`（其子域名）",
    ),
    "net.preset_without_at": (
        "`{entry}` is the name of a network preset: write `{preset}` (a host of that "
        "name: `{entry}.`)",
        "`{entry}` 是网络预设的名称：请写 `{preset}`（若指同名主机：`{entry}.`）",
    ),
    "net.unknown_preset": (
        "unknown network preset `{name}` (known: {known})",
        "未知的网络预设 `{name}`（已知：{known}）",
    ),
    "net.wide_any": (
        "`*` allows every host on the internet",
        "`*` 允许访问互联网上的所有主机",
    ),
    "net.wide_tld": (
        "a wildcard over a whole top-level domain allows millions of hosts",
        "覆盖整个顶级域名的通配符允许数以百万计的主机",
    ),
    "net.wide_range": (
        "an address range allows every host in it",
        "地址范围允许其中的所有主机",
    ),
    "net.wide_private": (
        "a loopback, private or link-local address opens this machine's or the local "
        "network's services (metadata endpoints, databases, admin pages)",
        "回环、私有或链路本地地址会开放本机或本地网络的服务（元数据端点、数据库、管理页面）",
    ),
    "net.blocked": (
        "swifty-sandbox: blocked network access to {host}:{port} ({why}); allow it with "
        "--allow-net {entry} or network.allow in ~/.swifty/config.yaml",
        "swifty-sandbox：已阻止访问 {host}:{port}（{why}）；可用 --allow-net {entry} "
        "或 ~/.swifty/config.yaml 中的 network.allow 允许它",
    ),
    "net.offline": (
        "swifty-sandbox: this command ran without network (the sandbox's default); allow "
        "the hosts it needs with --allow-net HOST (or a preset such as @pypi, @npm) or "
        "network.allow in ~/.swifty/config.yaml",
        "swifty-sandbox：该命令在无网络环境中运行（沙箱默认如此）；可用 --allow-net 主机"
        "（或 @pypi、@npm 等预设）或 ~/.swifty/config.yaml 中的 network.allow 允许所需主机",
    ),
    "net.why_unlisted": ("not in the allowlist", "不在允许列表中"),
    "net.why_denied": ("a network.deny entry names it", "network.deny 中的条目禁止了它"),
    "net.why_refused": ("the person said no", "用户拒绝了"),
    "net.why_private": (
        "it resolves to a loopback, private, link-local or metadata address; only an IP "
        "entry opens those",
        "它解析为回环、私有、链路本地或元数据地址；只有 IP 条目才能开放这些地址",
    ),
    "net.blocked_body": (
        "swifty-sandbox blocked this request: {host}:{port} ({why}). Allow it with "
        "--allow-net {entry} or network.allow in ~/.swifty/config.yaml.",
        "swifty-sandbox 阻止了此请求：{host}:{port}（{why}）。可用 --allow-net {entry} "
        "或 ~/.swifty/config.yaml 中的 network.allow 允许它。",
    ),
    "net.ask": (
        "the command wants to reach {host}:{port}, which is not in the network allowlist",
        "命令想要访问 {host}:{port}，它不在网络允许列表中",
    ),
    "net.store_shape": (
        "cannot add `{entry}` to {file}: its `network.allow` is not a plain YAML list; "
        "add it by hand",
        "无法把 `{entry}` 添加到 {file}：其中的 `network.allow` 不是普通的 YAML 列表；请手动添加",
    ),
    "net.more": (
        "swifty-sandbox: {count} more network request(s) to other destinations were "
        "handled but are not listed (at most {limit} destinations are recorded per run)",
        "swifty-sandbox：另有 {count} 个发往其他目的地的网络请求已处理但未列出"
        "（每次运行最多记录 {limit} 个目的地）",
    ),
}
