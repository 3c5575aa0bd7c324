// Package oncewait: Once, a function that blocks. The first caller's
// initialization waits for a config that a later step was to send; every
// other caller of Do waits for the first.
//
// truth: leak
package oncewait

import (
	"sync"
	"testing"
	"time"
)

type service struct {
	once   sync.Once
	config chan string
	name   string
}

func (s *service) init() {
	s.once.Do(func() { s.name = <-s.config })
}

func TestInit(t *testing.T) {
	s := &service{config: make(chan string)}
	go s.init()
	go s.init()
	time.Sleep(10 * time.Millisecond)
	// s.config <- "prod" was forgotten
}
