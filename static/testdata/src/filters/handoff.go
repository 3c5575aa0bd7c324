package filters

import "sync"

// handoff: the goroutine closes done after writing res; the spawner reads
// res only after receiving from done. The handoff filter removes it.
func handoff() int {
	var res int
	done := make(chan struct{})
	go func() {
		defer close(done)
		res = 42
	}()
	<-done
	return res
}

// handoffWG: the same ordering through a WaitGroup.
func handoffWG() int {
	var res int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res = 1
	}()
	wg.Wait()
	return res
}

// noHandoff: the spawner reads before waiting; the filter must keep it.
func noHandoff() int {
	var res int
	done := make(chan struct{})
	go func() {
		res = 42 // want `potential race on res: write at handoff.go:36:3 in goroutine noHandoff\$1 started at handoff.go:35:2 holding no lock, and read at handoff.go:39:7 in noHandoff after the go statement`
		close(done)
	}()
	r := res
	<-done
	return r
}

// handoffSelect: the spawner waits in a select whose every case receives.
func handoffSelect(quit chan struct{}, f func() error) error {
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		err = f()
		if err != nil {
			return
		}
		err = f()
	}()
	select {
	case <-quit:
		<-done
		return nil
	case <-done:
	}
	if err != nil {
		return err
	}
	return nil
}
