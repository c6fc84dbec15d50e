#!/bin/sh
# Installs the tasksessiond plugin for OpenCode, for the current user:
#   - copies tasksessiond.ts into ${XDG_CONFIG_HOME:-~/.config}/opencode/plugin/
#     (OpenCode loads every *.ts there at start, and installs the plugin's one
#     dependency, @opencode-ai/plugin, into that directory itself);
#   - merges opencode.json (OpenCode's own to-do tools off) into the user's
#     ${XDG_CONFIG_HOME:-~/.config}/opencode/opencode.json, creating it if
#     missing; every other setting is kept.
# Run it again after an update: it is idempotent.
#
#   contrib/opencode/install.sh
#
# It needs node (which comes with npm, as OpenCode does) for the merge.
# tasksessiond itself must be on PATH (go install ./cmd/tasksessiond), or
# name it in TASKSESSIOND_BIN where OpenCode runs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
conf=${XDG_CONFIG_HOME:-$HOME/.config}/opencode

command -v node >/dev/null 2>&1 || {
  echo "install.sh: node is not on PATH; it is needed to merge $here/opencode.json into $conf/opencode.json" >&2
  exit 1
}

mkdir -p "$conf/plugin"
cp "$here/tasksessiond.ts" "$conf/plugin/tasksessiond.ts.tmp"
mv "$conf/plugin/tasksessiond.ts.tmp" "$conf/plugin/tasksessiond.ts"

node - "$here/opencode.json" "$conf/opencode.json" <<'NODE'
const fs = require("fs")
const [fragmentPath, target] = process.argv.slice(2)
const fragment = JSON.parse(fs.readFileSync(fragmentPath, "utf8"))
let config = {}
let before = null
if (fs.existsSync(target)) {
  before = fs.readFileSync(target, "utf8")
  try {
    config = before.trim() === "" ? {} : JSON.parse(before)
  } catch (e) {
    console.error(`install.sh: ${target} is not plain JSON (${e.message}); add ${JSON.stringify(fragment.tools)} under "tools" by hand`)
    process.exit(1)
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    console.error(`install.sh: ${target} does not hold a JSON object`)
    process.exit(1)
  }
}
// merge: objects key by key, anything else from the fragment; keys the
// fragment does not name stay as they are.
const merge = (a, b) => {
  if (b === null || typeof b !== "object" || Array.isArray(b)) return b
  const out = a !== null && typeof a === "object" && !Array.isArray(a) ? { ...a } : {}
  for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v)
  return out
}
const { $schema, ...rest } = fragment
let merged = merge(config, rest)
if (!merged.$schema) merged = { $schema, ...merged }
const after = JSON.stringify(merged, null, 2) + "\n"
if (after !== before) {
  const mode = before === null ? 0o600 : fs.statSync(target).mode & 0o777
  fs.writeFileSync(target + ".tmp", after, { mode })
  fs.renameSync(target + ".tmp", target)
}
NODE

echo "tasksessiond: installed $conf/plugin/tasksessiond.ts and merged $conf/opencode.json"
if ! command -v "${TASKSESSIOND_BIN:-tasksessiond}" >/dev/null 2>&1; then
  echo "tasksessiond: note: ${TASKSESSIOND_BIN:-tasksessiond} is not on PATH; the plugin starts the daemon with it (go install ./cmd/tasksessiond)" >&2
fi
