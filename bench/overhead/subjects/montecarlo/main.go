// Command montecarlo runs bench/subjects/montecarlo (Java Grande's Monte
// Carlo pricing) at a size that takes about a second, for the overhead
// table.
package main

import (
	"fmt"

	"github.com/racekit/racekit/bench/subjects/montecarlo"
)

func main() {
	fmt.Println(montecarlo.Run(montecarlo.Config{Tasks: 2000, Steps: 1000, Threads: 2}))
}
