// Package abbamethods: resource deadlock, AB-BA across two methods. Post
// locks the ledger, then the audit log; Audit locks the log, then the
// ledger. A post and an audit at once can deadlock.
//
// truth: deadlock
package abbamethods

import (
	"sync"
	"testing"
	"time"
)

type bank struct {
	ledger, log sync.Mutex
	entries     []int
	audits      int
}

func (b *bank) post(v int) {
	b.ledger.Lock()
	defer b.ledger.Unlock()
	b.entries = append(b.entries, v)
	b.log.Lock()
	b.audits++
	b.log.Unlock()
}

func (b *bank) audit() int {
	b.log.Lock()
	defer b.log.Unlock()
	b.ledger.Lock()
	n := len(b.entries)
	b.ledger.Unlock()
	return n
}

func TestPostAndAudit(t *testing.T) {
	b := &bank{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		b.audit()
	}()
	b.post(1)
	wg.Wait()
}
