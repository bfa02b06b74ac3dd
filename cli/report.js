(function () {
"use strict";
var data = JSON.parse(document.getElementById("data").textContent);
var records = Array.isArray(data.records) ? data.records : [];
var state = {decision: "all", q: "", violations: false, lang: data.lang};
var EFFECTS = ["all", "allow", "deny", "ask"];
function L(key) { var table = data.labels[state.lang] || data.labels.en; return table[key] || key; }
function el(tag, cls, text) {
  var node = document.createElement(tag);
  if (cls) { node.className = cls; }
  if (text !== undefined && text !== null) { node.textContent = visible(text); }
  return node;
}
function list(value) { return Array.isArray(value) ? value : []; }
function effect(r) { var d = r.decision || {}; return EFFECTS.indexOf(d.effect) > 0 ? d.effect : "allow"; }
function what(r) {
  var q = r.request || {};
  if (typeof q.command === "string") { return q.command; }
  if (Array.isArray(q.argv)) { return q.argv.join(" "); }
  return String(q.tool || "") + " " + String(q.path || "");
}
// Controls and bidirectional overrides in hostile text (a command, a reason quoting it,
// a path, a host) would reorder or hide what is shown (`\u202e` makes "exe.txt" read "txt.exe"): shown as escapes instead.
var INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;
function visible(text) {
  return String(text).replace(INVISIBLE, function (c) {
    return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
  });
}
function subject(v) { return String(v.path || v.host || ""); }
function haystack(r) {
  var d = r.decision || {}, rule = d.rule || {};
  var parts = [what(r), d.reason, rule.text, r.surface, r.backend];
  list(r.violations).forEach(function (v) { parts.push(subject(v), v.kind, v.op, v.rule, v.fix); });
  list(r.network).forEach(function (n) { parts.push(n.host); });
  return parts.filter(function (p) { return p !== undefined && p !== null; }).join("\n").toLowerCase();
}
function matches(r) {
  if (state.decision !== "all" && effect(r) !== state.decision) { return false; }
  if (state.violations && list(r.violations).length === 0) { return false; }
  if (state.q && haystack(r).indexOf(state.q.toLowerCase()) < 0) { return false; }
  return true;
}
function readHash() {
  location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
    var at = pair.indexOf("="), key, value;
    if (at < 0) { return; }
    try { key = decodeURIComponent(pair.slice(0, at)); value = decodeURIComponent(pair.slice(at + 1)); }
    catch (e) { return; }
    if (key === "decision" && EFFECTS.indexOf(value) >= 0) { state.decision = value; }
    else if (key === "q") { state.q = value; }
    else if (key === "violations") { state.violations = value === "1"; }
    else if (key === "lang" && data.labels[value]) { state.lang = value; }
  });
}
function writeHash() {
  var parts = [];
  if (state.decision !== "all") { parts.push("decision=" + state.decision); }
  if (state.q) { parts.push("q=" + encodeURIComponent(state.q)); }
  if (state.violations) { parts.push("violations=1"); }
  if (state.lang !== data.lang) { parts.push("lang=" + state.lang); }
  history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
}
function stat(value, label) {
  var box = el("div", "stat"); box.appendChild(el("b", "", value)); box.appendChild(el("span", "", label));
  return box;
}
function header() {
  var top = document.getElementById("top"); top.textContent = "";
  top.appendChild(el("h1", "", L("title")));
  top.appendChild(el("div", "meta", L("project") + ": " + data.project + "  ·  " +
                      L("generated") + ": " + String(data.generated).replace("T", " ").slice(0, 19) + " UTC"));
  var hosts = {}, runs = 0, denied = 0, viol = 0;
  records.forEach(function (r) {
    if (r.kind === "run" && r.ran !== false && effect(r) === "allow") { runs += 1; }
    if (effect(r) === "deny") { denied += 1; }
    viol += list(r.violations).length;
    list(r.network).forEach(function (n) { hosts[String(n.host) + ":" + String(n.port)] = 1; });
  });
  var stats = el("div", "stats");
  stats.appendChild(stat(records.length, L("records")));
  stats.appendChild(stat(runs, L("commands")));
  stats.appendChild(stat(denied, L("denied")));
  stats.appendChild(stat(viol, L("violations")));
  stats.appendChild(stat(Object.keys(hosts).length, L("hosts")));
  top.appendChild(stats);
  document.documentElement.lang = state.lang;
  document.title = L("title");
}
function controls() {
  var nav = document.getElementById("controls"); nav.textContent = "";
  var group = el("div", "group");
  EFFECTS.forEach(function (name) {
    var button = el("button", "", name === "all" ? L("all") : L(name));
    button.type = "button"; button.dataset.decision = name;
    button.setAttribute("aria-pressed", String(state.decision === name));
    button.addEventListener("click", function () { state.decision = name; update(); });
    group.appendChild(button);
  });
  nav.appendChild(group);
  var search = el("input"); search.type = "search"; search.id = "q";
  search.placeholder = L("search"); search.value = state.q;
  search.addEventListener("input", function () { state.q = search.value; renderList(); writeHash(); });
  nav.appendChild(search);
  var label = el("label"), box = el("input"); box.type = "checkbox"; box.id = "only-violations";
  box.checked = state.violations;
  box.addEventListener("change", function () { state.violations = box.checked; update(); });
  label.appendChild(box); label.appendChild(document.createTextNode(L("only_violations")));
  nav.appendChild(label);
  nav.appendChild(el("span", "count")).id = "count";
  var lang = el("button", "lang", L("language")); lang.type = "button";
  lang.addEventListener("click", function () { state.lang = state.lang === "en" ? "zh" : "en"; render(); });
  nav.appendChild(lang);
}
function entry(r) {
  var kind = effect(r), item = el("li", "entry e-" + kind), card = el("div", "card");
  item.appendChild(el("span", "marker"));
  var head = el("div", "head");
  head.appendChild(el("time", "", String(r.time || "").slice(11, 19)));
  head.appendChild(el("span", "badge " + kind, L(kind)));
  head.appendChild(el("span", "badge", String(r.surface || "")));
  if (r.kind !== "run") { head.appendChild(el("span", "badge", L("decision"))); }
  if (r.kind === "run") {
    if (r.ran === false) { head.appendChild(el("span", "badge fail", L("not_run"))); }
    else if (kind === "allow") {
      head.appendChild(el("span", "badge" + (r.exit_code ? " fail" : ""), L("exit") + " " + String(r.exit_code)));
    }
    if (r.timed_out) { head.appendChild(el("span", "badge fail", L("timed_out"))); }
    if (typeof r.duration_ms === "number") { head.appendChild(el("span", "", r.duration_ms + " ms")); }
    if (r.backend) { head.appendChild(el("span", "", L("backend") + ": " + String(r.backend))); }
  }
  card.appendChild(head);
  card.appendChild(el("pre", "cmd", what(r)));
  var d = r.decision || {};
  if (d.reason) { card.appendChild(el("p", "reason", d.reason)); }
  if (d.rule && d.rule.text) {
    var rule = el("p", "rule", L("rule") + ": ");
    rule.appendChild(el("code", "", d.rule.text));
    rule.appendChild(document.createTextNode(visible("  (" + String(d.rule.file) + ":" + String(d.rule.line) + ")")));
    card.appendChild(rule);
  }
  var viol = list(r.violations);
  if (viol.length) {
    var vl = el("ul", "viol");
    viol.forEach(function (v) {
      var li = el("li", "", [v.kind, v.op, subject(v)].filter(Boolean).join(" · "));
      if (v.rule) { li.appendChild(el("span", "fix", L("rule") + ": " + String(v.rule))); }
      if (v.fix) { li.appendChild(el("span", "fix", L("fix") + ": " + String(v.fix))); }
      vl.appendChild(li);
    });
    card.appendChild(vl);
  }
  var net = list(r.network);
  if (net.length) {
    var nl = el("ul", "net");
    net.forEach(function (n) {
      var li = el("li");
      li.appendChild(el("span", "badge " + (n.allowed ? "allow" : "deny"), n.allowed ? L("allowed") : L("blocked")));
      li.appendChild(el("code", "", String(n.host) + ":" + String(n.port)));
      nl.appendChild(li);
    });
    card.appendChild(nl);
  }
  item.appendChild(card);
  return item;
}
function renderList() {
  var ol = document.getElementById("timeline"); ol.textContent = "";
  var shown = 0, day = "";
  records.forEach(function (r) {
    if (!matches(r)) { return; }
    var today = String(r.time || "").slice(0, 10);
    if (today !== day) { day = today; ol.appendChild(el("li", "day", today)); }
    ol.appendChild(entry(r));
    shown += 1;
  });
  var empty = document.getElementById("empty");
  empty.textContent = L("none"); empty.hidden = shown > 0;
  document.getElementById("count").textContent = shown + " / " + records.length + " " + L("shown");
}
function update() {
  document.querySelectorAll("nav .group button").forEach(function (b) {
    b.setAttribute("aria-pressed", String(b.dataset.decision === state.decision));
  });
  renderList(); writeHash();
}
function render() { header(); controls(); update(); }
readHash();
render();
window.addEventListener("hashchange", function () { readHash(); render(); });
})();

