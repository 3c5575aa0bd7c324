package static

// Tests use httpfake (testdata/src/httpfake) in place of net/http, whose
// analysis with its dependencies takes minutes.
func init() {
	for _, n := range []string{"httpfake.HandleFunc", "httpfake.Handle", "(*httpfake.ServeMux).HandleFunc", "(*httpfake.ServeMux).Handle"} {
		httpRegistrations[n] = true
	}
	// timefake.AfterFunc stands for time.AfterFunc (testdata/src/timers).
	timerCallbacks["timefake.AfterFunc"] = true
	// testingfake.T stands for testing.T (testdata/src/subtests).
	subtestRuns["(*testingfake.T).Run"] = true
	parallelCalls["(*testingfake.T).Parallel"] = true
}
