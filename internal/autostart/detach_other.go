//go:build !unix

package autostart

import "syscall"

func detached() *syscall.SysProcAttr { return nil }

const noFollow = 0
