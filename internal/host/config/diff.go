package config

import (
	"cmp"
	"io"

	"github.com/aymanbagabas/go-udiff"
)

// Diff writes the change as a unified diff, what --dry-run prints.
func Diff(w io.Writer, c Change) {
	if !c.Changed() {
		return
	}
	from, to := "a"+c.Path, "b"+c.Path
	if c.Old == nil {
		from = "/dev/null"
	}
	if c.New == nil {
		to = "/dev/null"
	}
	// an empty file made or removed has no hunk: the header says it
	io.WriteString(w, cmp.Or(udiff.Unified(from, to, string(c.Old), string(c.New)), "--- "+from+"\n+++ "+to+"\n"))
}
