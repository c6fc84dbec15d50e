#!/bin/sh
# Installs the tasksessiond plugin for OpenCode, for the current user:
#   - copies tasksessiond.ts into ${XDG_CONFIG_HOME:-~/.config}/opencode/plugin/
#     (OpenCode loads every *.ts there at start, and installs the plugin's one
#     dependency, @opencode-ai/plugin, into that directory itself);
#   - sets opencode.json's "tools" (OpenCode's own to-do tools off) in the
#     user's ${XDG_CONFIG_HOME:-~/.config}/opencode/opencode.jsonc, or else
#     opencode.json (created if missing). The file may hold comments and
#     trailing commas (JSONC, as OpenCode reads it): it is edited in place,
#     its comments, order and layout kept, every other setting untouched.
# Everything is checked before anything is changed: a config it cannot read
# stops it with nothing changed. Run it again after an update: it is
# idempotent (a second run changes nothing).
#
#   contrib/opencode/install.sh
#
# It needs node (which comes with npm, as OpenCode does) for the edit.
# tasksessiond itself must be on PATH (go install ./cmd/tasksessiond), or
# name it in TASKSESSIOND_BIN where OpenCode runs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
conf=${XDG_CONFIG_HOME:-$HOME/.config}/opencode

command -v node >/dev/null 2>&1 || {
  echo "install.sh: node is not on PATH; it is needed to edit $conf/opencode.json; nothing was changed" >&2
  exit 1
}

# OpenCode merges config.json, opencode.json and opencode.jsonc, in that
# order: the last one there has the last word.
target=$conf/opencode.json
[ -f "$conf/opencode.jsonc" ] && target=$conf/opencode.jsonc

mkdir -p "$conf"
new=$(mktemp "$conf/.tasksessiond-install.XXXXXX")
trap 'rm -f "$new" "$conf/plugin/tasksessiond.ts.tmp"' EXIT
node - "$here/opencode.json" "$target" "$new" <<'NODE'
// Sets each key of the fragment's "tools" in the user's OpenCode config
// (JSON with comments and trailing commas, as OpenCode reads it), editing
// the text in place: comments, order and layout stay; nothing changes when
// the values are already set. It writes the result to OUT (or nothing when
// there is nothing to change) and exits 1, writing nothing, on a file it
// cannot read.
const fs = require("fs")
const [fragmentPath, target, out] = process.argv.slice(2)
const fragment = JSON.parse(fs.readFileSync(fragmentPath, "utf8"))
const fail = (msg) => {
  console.error(`install.sh: ${target}: ${msg}; nothing was changed`)
  process.exit(1)
}
if (!fs.existsSync(target) || fs.readFileSync(target, "utf8").trim() === "") {
  fs.writeFileSync(out, JSON.stringify(fragment, null, 2) + "\n")
  process.exit(0)
}
const text = fs.readFileSync(target, "utf8")

// parse reads JSONC into nodes with their spans: {kind, start, end,
// members: [{key, value, end}] for an object, items for an array}.
let i = 0
const line = () => text.slice(0, i).split("\n").length
const skip = () => {
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i++
    if (text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i++
    } else if (text.startsWith("/*", i)) {
      const e = text.indexOf("*/", i + 2)
      if (e < 0) fail(`a comment is not closed (line ${line()})`)
      i = e + 2
    } else return
  }
}
const value = () => {
  skip()
  const start = i
  const c = text[i]
  if (c === "{" || c === "[") {
    const close = c === "{" ? "}" : "]"
    const node = { kind: c === "{" ? "object" : "array", start, members: [], items: [] }
    i++
    for (;;) {
      skip()
      if (text[i] === close) break
      if (c === "{") {
        if (text[i] !== '"') fail(`a key was expected (line ${line()})`)
        const key = JSON.parse(text.slice(i, string()))
        skip()
        if (text[i] !== ":") fail(`":" was expected (line ${line()})`)
        i++
        const v = value()
        node.members.push({ key, value: v })
      } else node.items.push(value())
      skip()
      if (text[i] === ",") {
        i++
        continue
      }
      if (text[i] !== close) fail(`"," or "${close}" was expected (line ${line()})`)
    }
    node.close = i
    i++
    node.end = i
    return node
  }
  if (c === '"') return { kind: "string", start, end: string() }
  const m = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i))
  if (!m) fail(`a value was expected (line ${line()})`)
  i += m[0].length
  return { kind: "literal", start, end: i, text: m[0] }
}
function string() {
  i++
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1
  if (i >= text.length) fail("a string is not closed")
  return ++i
}
const root = value()
skip()
if (i < text.length) fail(`text after the configuration (line ${line()})`)
if (root.kind !== "object") fail("it does not hold an object")

// The layout: the indent of the root's first member, else two spaces.
const lineStart = (p) => text.lastIndexOf("\n", p - 1) + 1
const indentAt = (p) => /^[ \t]*/.exec(text.slice(lineStart(p)))[0]
const unit = root.members.length ? indentAt(root.members[0].value.start).replace(indentAt(root.start), "") || "  " : "  "
const edits = [] // [at, deleteCount, insert]
const render = (v, indent) => JSON.stringify(v, null, unit).replace(/\n/g, "\n" + indent)
// add puts the member key: v last in object node, after a comma for the
// member before it, on a line of its own.
const add = (node, key, v) => {
  const closeIndent = indentAt(node.close)
  const indent = node.members.length ? indentAt(node.members[node.members.length - 1].value.start) : closeIndent + unit
  const last = node.members[node.members.length - 1]
  if (last) {
    let j = last.value.end
    const saved = i
    i = j
    skip()
    const comma = text[i] === ","
    i = saved
    if (!comma) edits.push([j, 0, ","])
  }
  const member = `${indent}${JSON.stringify(key)}: ${render(v, indent)}\n`
  const own = /^[ \t]*$/.test(text.slice(lineStart(node.close), node.close))
  if (own) edits.push([lineStart(node.close), 0, member])
  else edits.push([node.close, 0, "\n" + member + closeIndent])
}
const tools = root.members.filter((m) => m.key === "tools").pop()
if (!tools) add(root, "tools", fragment.tools)
else if (tools.value.kind !== "object") edits.push([tools.value.start, tools.value.end - tools.value.start, render(fragment.tools, indentAt(tools.value.start))])
else {
  const missing = {}
  for (const [k, v] of Object.entries(fragment.tools)) {
    const m = tools.value.members.filter((m) => m.key === k).pop()
    if (!m) missing[k] = v
    else if (text.slice(m.value.start, m.value.end) !== JSON.stringify(v)) edits.push([m.value.start, m.value.end - m.value.start, JSON.stringify(v)])
  }
  for (const [k, v] of Object.entries(missing)) add(tools.value, k, v)
}
if (edits.length === 0) process.exit(0)
// From the end, so that each edit's offsets hold; of two at one place,
// the one made first ends up first.
edits.forEach((e, n) => e.push(n))
edits.sort((a, b) => b[0] - a[0] || b[3] - a[3])
let result = text
for (const [at, del, ins] of edits) result = result.slice(0, at) + ins + result.slice(at + del)
fs.writeFileSync(out, result)
NODE

mkdir -p "$conf/plugin"
cp "$here/tasksessiond.ts" "$conf/plugin/tasksessiond.ts.tmp"
mv "$conf/plugin/tasksessiond.ts.tmp" "$conf/plugin/tasksessiond.ts"
if [ -s "$new" ]; then
  if [ -f "$target" ]; then
    chmod "$(stat -c %a "$target" 2>/dev/null || stat -f %Lp "$target")" "$new"
  else
    chmod 600 "$new"
  fi
  mv "$new" "$target"
  echo "tasksessiond: installed $conf/plugin/tasksessiond.ts and set \"tools\" in $target"
else
  echo "tasksessiond: installed $conf/plugin/tasksessiond.ts; $target already had the settings"
fi
if ! command -v "${TASKSESSIOND_BIN:-tasksessiond}" >/dev/null 2>&1; then
  echo "tasksessiond: note: ${TASKSESSIOND_BIN:-tasksessiond} is not on PATH; the plugin starts the daemon with it (go install ./cmd/tasksessiond)" >&2
fi
