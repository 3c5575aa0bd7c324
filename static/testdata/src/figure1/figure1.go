// Package figure1 is RELAY's Figure 1 (airo_read_stats and airo_thread from
// the Linux kernel) ported to Go.
package figure1

import "sync"

type power struct{ event int }

type stats struct{ rxPackets int }

type airoInfo struct {
	lock  sync.Mutex
	power power
	stats stats
}

type netDevice struct{ priv *airoInfo }

// vals is global and only read: no race on it.
var vals [8]int

// AiroReadStats is called with ai.lock held and releases it: its relative
// lockset summary is ({}, {ai.lock}).
func AiroReadStats(ai *airoInfo) { // want AiroReadStats:`lock \(\{\}, \{ai.lock\}\), 3 accesses`
	if ai.power.event != 0 { // read under ai.lock: no race
		ai.lock.Unlock()
		return
	}
	ai.lock.Unlock()
	ai.stats.rxPackets = vals[0] // want `potential race on d.priv.stats.rxPackets: write at figure1.go:30:11 in goroutine AiroThread started at figure1.go:42:3 holding no lock, and write at figure1.go:30:11 in another instance of the same goroutine holding no lock`
}

func AiroThread(d *netDevice) { // want AiroThread:`lock \(\{\}, \{d.priv.lock\}\), 4 accesses`
	dev := d
	ai := dev.priv
	ai.lock.Lock()
	AiroReadStats(ai)
}

func Start(d *netDevice, n int) { // want Start:`lock \(\{\}, \{\}\), 0 accesses`
	for i := 0; i < n; i++ {
		go AiroThread(d)
	}
}
