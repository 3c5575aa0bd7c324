// Command sor runs bench/subjects/sor (Java Grande's successive
// over-relaxation) at a size that takes about a second, for the overhead
// table.
package main

import (
	"fmt"

	"github.com/racekit/racekit/bench/subjects/sor"
)

func main() {
	fmt.Println(sor.Run(sor.Config{Size: 200, Threads: 2, Iterations: 100}))
}
