// Puts this platform's binary (from the optional dependency
// tasksessiond-<platform>-<arch>) over bin/tasksessiond, the launcher npm
// links the command to, so a host runs the binary itself and not Node
// running it: faster, and the MCP bridge's parent is then the host, which
// is how it follows the host's conversation. npm runs it after install
// (postinstall); where npm ran no scripts, the launcher runs it on its
// first run. It never fails: without the binary the launcher stays, and
// says what is missing when run.
"use strict"
const fs = require("node:fs")
const path = require("node:path")

// binary is the path of this platform's binary, or undefined.
function binary() {
  try {
    return require.resolve(`tasksessiond-${process.platform}-${process.arch}/bin/tasksessiond`)
  } catch {
    return undefined
  }
}

// link puts the binary in the launcher's place; it reports whether it did.
function link() {
  const src = binary()
  if (!src) return false
  const dst = path.join(__dirname, "bin", "tasksessiond")
  const tmp = `${dst}.${process.pid}.tmp`
  try {
    try {
      fs.linkSync(src, tmp)
    } catch {
      fs.copyFileSync(src, tmp)
    }
    fs.chmodSync(tmp, 0o755)
    fs.renameSync(tmp, dst)
    return true
  } catch {
    fs.rmSync(tmp, { force: true })
    return false
  }
}

module.exports = { binary, link }
if (require.main === module) link()
