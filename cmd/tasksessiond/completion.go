package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/cli"
)

// ownCommands are the subcommands main handles itself.
var ownCommands = []string{"serve", "mcp", "hook", "fsck", "board", "completion", "version", "help"}

func completionCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "bash" {
		fmt.Fprint(stderr, `Usage: tasksessiond completion bash

Print a bash completion script for tasksessiond's commands and flags
(zsh: run "autoload bashcompinit && bashcompinit" first).

Example:
  source <(tasksessiond completion bash)
`)
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	names := append([]string{}, ownCommands...)
	for _, c := range cli.Commands {
		names = append(names, c.Name)
	}
	fmt.Fprintf(stdout, `# bash completion for tasksessiond
_tasksessiond() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
    return
  fi
  case "$cur" in
    -*) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${COMP_WORDS[1]}" --help 2>&1 | sed -n 's/^  \(-[a-z-]*\).*/-\1/p')" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _tasksessiond tasksessiond
`, strings.Join(names, " "))
	return 0
}
