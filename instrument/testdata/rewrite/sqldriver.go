package p

import "database/sql/driver"

// A database/sql driver's exported methods note their entry and return
// (rt.DriverEnter, rt.DriverLeave): database/sql calls them holding locks
// of its own.
type conn struct{ n int }

func (c *conn) Prepare(query string) (driver.Stmt, error) { c.n++; return nil, nil }
func (c *conn) Close() error                              { return nil }
func (c *conn) Begin() (driver.Tx, error)                 { return nil, nil }

// Not a method of driver.Conn's, but exported: database/sql may call it
// through an optional interface (driver.Pinger here).
func (c *conn) Ping() error { c.n++; return nil }

// Unexported: database/sql does not call it.
func (c *conn) bump() { c.n++ }

// Not a driver type.
type other struct{ n int }

func (o *other) Close() error { o.n++; return nil }
