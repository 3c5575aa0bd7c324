// The main function, os.Exit and log.Fatal.
package main

import (
	"log"
	"os"
)

var failed bool

func main() {
	if len(os.Args) > 3 {
		log.Fatalf("too many: %d", len(os.Args))
	}
	if failed {
		os.Exit(2)
	}
}
