package main

import (
	"fmt"
	"io"
	"strings"
)

func completionCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "bash" {
		asked := len(args) == 1 && (args[0] == "-h" || args[0] == "--help")
		out := stderr
		if asked {
			out = stdout // asked for: the answer
		}
		fmt.Fprint(out, `Usage: tasksessiond completion bash

Print a bash completion script for tasksessiond's commands and flags
(zsh: run "autoload bashcompinit && bashcompinit" first).

Examples:
  source <(tasksessiond completion bash)                       # this shell
  tasksessiond completion bash > ~/.local/share/bash-completion/completions/tasksessiond
                                                               # every new shell (bash-completion)
`)
		if asked {
			return 0
		}
		return 2
	}
	var names []string
	for _, c := range commands() {
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
