//go:build go1.23

package rt

import "sync"

// SyncMapClear is m.Clear().
func SyncMapClear(m *sync.Map, site uint32) {
	mapOp(m, site, func() bool { m.Clear(); return false })
}
