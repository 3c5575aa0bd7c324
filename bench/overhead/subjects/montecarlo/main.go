// Command montecarlo runs bench/subjects/montecarlo (Java Grande's Monte
// Carlo pricing) at a size that takes 0.2-0.3 s uninstrumented on the
// 2-core VM (long enough for the samplers to back off, and for start-up to
// be noise), for the overhead table.
package main

import (
	"fmt"

	"github.com/racekit/racekit/bench/subjects/montecarlo"
)

func main() {
	fmt.Println(montecarlo.Run(montecarlo.Config{Tasks: 8000, Steps: 1000, Threads: 2}))
}
