//go:build unix

package tracefile

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists (a zombie not yet
// reaped counts as alive: its parent reaps it at once).
func processAlive(pid int) (alive, known bool) {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM), true
}
