package stdraces

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// A database/sql driver of the program's (rt.DriverEnter): database/sql
// calls its methods holding locks of its own, unseen by racekit.

// fakeConn's fields are written by Open and used by each Exec without a
// lock of the driver's: database/sql gives a connection to one goroutine
// at a time.
type fakeConn struct {
	name  string
	execs int
	hook  func() // what each Exec runs, set by the test
}

type fakeDriver struct{ hook func() }

func (d *fakeDriver) Open(name string) (driver.Conn, error) {
	return &fakeConn{name: name, hook: d.hook}, nil
}

func (c *fakeConn) Prepare(query string) (driver.Stmt, error) { return &fakeStmt{c: c}, nil }
func (c *fakeConn) Close() error                              { return nil }
func (c *fakeConn) Begin() (driver.Tx, error)                 { return nil, errors.New("no transactions") }

type fakeStmt struct{ c *fakeConn }

func (s *fakeStmt) Close() error  { return nil }
func (s *fakeStmt) NumInput() int { return -1 }

func (s *fakeStmt) Exec(args []driver.Value) (driver.Result, error) {
	s.c.execs++
	if s.c.hook != nil {
		s.c.hook()
	}
	return driver.RowsAffected(len(s.c.name)), nil
}

func (s *fakeStmt) Query(args []driver.Value) (driver.Rows, error) {
	return &fakeRows{n: s.c.execs}, nil
}

type fakeRows struct{ n int }

func (r *fakeRows) Columns() []string { return []string{"n"} }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if r.n < 0 {
		return io.EOF
	}
	dest[0] = int64(r.n)
	r.n = -1
	return nil
}

var (
	registerOnce sync.Once
	handoff      = &fakeDriver{}
	overlap      = &fakeDriver{}
)

func openFake(t *testing.T, name string, conns int) *sql.DB {
	registerOnce.Do(func() {
		sql.Register("racekit-handoff", handoff)
		sql.Register("racekit-overlap", overlap)
	})
	db, err := sql.Open(name, "dsn")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(conns)
	return db
}

// One connection, handed by database/sql's pool from one goroutine's Exec
// to the next one's: Open's writes and each Exec's are ordered by
// database/sql's locks.
func TestNoRaceSQLDriverHandoff(t *testing.T) {
	db := openFake(t, "racekit-handoff", 1)
	defer db.Close()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				if _, err := db.Exec("insert"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	var n int64
	if err := db.QueryRow("select").Scan(&n); err != nil || n != 12 {
		t.Errorf("execs: %d, %v; want 12", n, err)
	}
}

var overlapped int

// Two connections' Execs that overlap in time write one variable of the
// program: each waits for the other to have entered before it writes.
func TestRaceSQLDriverOverlap(t *testing.T) {
	db := openFake(t, "racekit-overlap", 2)
	defer db.Close()
	var arrived atomic.Int32
	overlap.hook = func() {
		arrived.Add(1)
		for arrived.Load() < 2 {
			runtime.Gosched()
		}
		overlapped++ // race: overlap
	}
	defer func() { overlap.hook = nil }()
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.Exec("insert"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
