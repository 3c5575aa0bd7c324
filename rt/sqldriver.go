package rt

import (
	"github.com/racekit/racekit/trace"
)

// DriverEnter and DriverLeave bracket an exported method of a
// database/sql driver type of the program (instrument: a type that
// implements driver.Driver, Connector, Conn, Stmt, Rows, Tx or Result):
// entry acquires sqlObj, return releases it. database/sql calls the
// driver holding locks racekit does not trace (its DB's mutex, each
// connection's): a connection one goroutine opened, with the fields Open
// wrote, is handed through the pool to another goroutine's query (mattn/
// go-sqlite3's TestQueryRowContextCancelParallel), which Go's race
// detector sees ordered by those locks. One global object over-
// approximates them, as ioObj does I/O's: races between two callbacks
// that overlap in time stay visible (an acquire joins only releases
// before it), races between callbacks already ordered by database/sql's
// pool may be missed; none is invented.
func DriverEnter(site uint32) {
	if on {
		emitEdge(trace.OpSyncAcquire, site, sqlObj)
	}
}

// DriverLeave is deferred by a driver method right after DriverEnter.
func DriverLeave(site uint32) {
	if on {
		emitEdge(trace.OpSyncRelease, site, sqlObj)
	}
}

var sqlObj = NewObject()
