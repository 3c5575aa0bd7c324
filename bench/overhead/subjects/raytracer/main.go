// Command raytracer runs bench/subjects/raytracer (Java Grande's ray
// tracer) at a size that takes about a second, for the overhead table.
package main

import (
	"fmt"

	"github.com/racekit/racekit/bench/subjects/raytracer"
)

func main() {
	fmt.Println(raytracer.Run(raytracer.Config{Width: 300, Height: 300, Threads: 2}))
}
