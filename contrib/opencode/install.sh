#!/bin/sh
# Installs the tasksessiond plugin for OpenCode: "tasksessiond setup opencode"
# does it (see contrib/opencode/README.md); this script is kept for old links.
exec "${TASKSESSIOND_BIN:-tasksessiond}" setup opencode "$@"
