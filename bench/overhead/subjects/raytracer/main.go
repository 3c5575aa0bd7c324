// Command raytracer runs bench/subjects/raytracer (Java Grande's ray
// tracer) at a size that takes 0.2-0.3 s uninstrumented on the 2-core VM
// (long enough for the samplers to back off, and for start-up to be noise),
// for the overhead table.
package main

import (
	"fmt"

	"github.com/racekit/racekit/bench/subjects/raytracer"
)

func main() {
	fmt.Println(raytracer.Run(raytracer.Config{Width: 2000, Height: 2000, Threads: 2}))
}
