// Deferred I/O calls: their edges are recorded when they run, by a wrapper
// of the function value (rt.IOLaterE); the acquire after a call that may
// read cannot wrap the call itself (IOReadV(tx.Rollback(), s) would roll
// back at once).
package p

import (
	"database/sql"
	"net"
	"net/url"
	"os/exec"
)

func deferIO(db *sql.DB, c *exec.Cmd) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	defer c.Wait()
	return tx.Commit()
}

// An if's or a switch's init statement cannot be followed by another: what
// is recorded after it (the read's acquire, a fresh result's allocation)
// goes before the condition or tag.
func initIO(c net.Conn, b []byte) int {
	if n, err := c.Read(b); err == nil {
		return n
	}
	switch u, err := url.Parse("http://h"); {
	case err == nil:
		return len(u.Host)
	}
	return 0
}
