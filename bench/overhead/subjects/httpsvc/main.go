// Command httpsvc runs bench/subjects/httpsvc's load generator (an HTTP
// service on a loopback listener, its clients on keep-alive connections)
// at a size that takes a few tenths of a second: the overhead table's
// server workload, the analog of LiteRace's Apache runs (ab's requests
// for static pages and CGI).
package main

import (
	"fmt"
	"log"

	"github.com/racekit/racekit/bench/subjects/httpsvc"
)

func main() {
	res, err := httpsvc.Run(httpsvc.LoadConfig{Clients: 8, Requests: 800, Items: 64, Reload: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Requests, res.ByStatus)
}
