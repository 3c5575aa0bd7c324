// Deferred I/O calls: the acquire after a call that may read cannot wrap a
// deferred call (IOReadV(tx.Rollback(), s) would roll back at once).
package p

import (
	"database/sql"
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
