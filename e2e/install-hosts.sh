#!/usr/bin/env bash
# Installs the pinned agent host CLIs the end-to-end tests drive, from npm,
# into a cache outside the repository, and prints each binary's path.
# Idempotent: a host whose pinned version is already in place is skipped.
#
#   e2e/install-hosts.sh            # every host
#   e2e/install-hosts.sh claude-code
#
# The cache is $TASKSESSIOND_E2E_CACHE, else $XDG_CACHE_HOME/tasksessiond-e2e,
# else ~/.cache/tasksessiond-e2e; the tests look there too (keep the
# versions below equal to the ones in the harnesses, e2e/*/host.go).
set -euo pipefail

cache=${TASKSESSIOND_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tasksessiond-e2e}

# host name, npm package, pinned version, binary (relative to node_modules)
hosts=(
  "claude-code @anthropic-ai/claude-code 2.1.328 .bin/claude"
  "codex @openai/codex 0.169.0 .bin/codex"
  "opencode opencode-ai 1.18.33 .bin/opencode"
  "gemini @google/gemini-cli 0.61.0 .bin/gemini"
  "copilot @github/copilot 1.0.102 .bin/copilot"
  "qwen @qwen-code/qwen-code 0.24.4 .bin/qwen"
)

# check DIR VERSION BIN: the binary runs and its --version names VERSION
# ("2.1.328 (Claude Code)", "codex-cli 0.169.0", "1.18.33", "0.61.0",
# "GitHub Copilot CLI 1.0.102.").
check() {
  local out
  out=$("$1/node_modules/$3" --version 2>/dev/null) || return 1
  [[ " $out " == *[\ -]"$2"[[:space:].]* ]]
}

install() {
  local name=$1 pkg=$2 version=$3 bin=$4
  local dir=$cache/$name-$version
  if check "$dir" "$version" "$bin"; then
    echo "$dir/node_modules/$bin"
    return
  fi
  echo "installing $pkg@$version into $dir" >&2
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  printf '{"private":true}\n' >"$dir.tmp/package.json"
  # The package's postinstall links the platform's native binary over its
  # bin stub; run it again in case npm was told to skip install scripts.
  npm install --prefix "$dir.tmp" --no-audit --no-fund --save-exact --loglevel=error "$pkg@$version" >&2
  if [[ $pkg == @anthropic-ai/claude-code ]] && ! check "$dir.tmp" "$version" "$bin"; then
    (cd "$dir.tmp/node_modules/$pkg" && node install.cjs) >&2
  fi
  if ! check "$dir.tmp" "$version" "$bin"; then
    echo "install-hosts: $pkg@$version installed but $dir.tmp/node_modules/$bin --version does not say $version" >&2
    exit 1
  fi
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  echo "$dir/node_modules/$bin"
}

want=("$@")
for h in "${hosts[@]}"; do
  read -r name pkg version bin <<<"$h"
  if [[ ${#want[@]} -gt 0 && ! " ${want[*]} " == *" $name "* ]]; then
    continue
  fi
  install "$name" "$pkg" "$version" "$bin"
done
