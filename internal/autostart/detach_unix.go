//go:build unix

package autostart

import "syscall"

// detached puts the daemon in a session of its own.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
