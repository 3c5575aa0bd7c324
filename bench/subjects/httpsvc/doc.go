// Package httpsvc is a small product-catalog HTTP service, the larger
// subject in the spirit of the seeds' servers (Jigsaw, Hedc, Weblech in
// RaceFuzzer and PECAN Table 1): request handlers on net/http's goroutines
// share a read-through cache, a pool of backend connections, request
// metrics, a rate limiter, an access log and a hot-reloadable
// configuration. The load generator (Run) starts the service on a loopback
// listener (net/http/httptest) and drives it with a bounded number of
// client goroutines and requests.
//
// Its races are the kind real services have, each argued where it is
// marked:
//   - the configuration is reloaded by swapping a pointer that handlers
//     read without synchronization (hs-cfg), so a handler may read the
//     fields of a config whose building it is not ordered after
//     (hs-cfg-pub: the clone and its patched fields against the reads);
//   - the cache's Get, which holds only the read lock, records the access
//     time and hit count of the entry (hs-cache-*);
//   - request metrics are plain counters bumped by every handler and read
//     by the stats endpoint (hs-metrics-*);
//   - a handler keeps using a backend connection after returning it to the
//     pool, racing with the next request that takes it (hs-conn-after-put);
//   - the pool's closed flag is checked without its lock on the fast path
//     (hs-pool-closed), and its wait statistics are bumped without it
//     (hs-pool-waits);
//   - the store's per-item view counter is bumped outside the store lock
//     (hs-store-views).
//
// Most of these are flaky for a happens-before detector (marked so): each
// request also takes the rate limiter's, the cache's, the pool's and the
// access log's locks, and those incidental lock handoffs order two
// requests' accesses unless they fall between the same two handoffs. A
// lockset analysis, which ignores such ordering, flags them in any run.
//
// And the lockset false alarms: a connection's fields are touched by
// whichever request holds it, without a lock, ordered by the pool's lock
// handoff (hs-conn-owner); items are built before they are published under
// the store's lock (hs-item-publish).
package httpsvc
