//go:build !unix

package text_test

import "time"

// cpuTime is unknown here; the benchmarks then report no CPU-time metric.
func cpuTime() time.Duration { return 0 }
