// Command sor runs bench/subjects/sor (Java Grande's successive
// over-relaxation) at a size that takes 0.2-0.3 s uninstrumented on the
// 2-core VM (long enough for the samplers to back off, and for start-up to
// be noise), for the overhead table.
package main

import (
	"fmt"

	"github.com/racekit/racekit/bench/subjects/sor"
)

func main() {
	fmt.Println(sor.Run(sor.Config{Size: 500, Threads: 2, Iterations: 300}))
}
