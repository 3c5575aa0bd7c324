package httpsvc

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
)

// Item is a catalog entry. Once published in the store an Item is not
// modified, except for its view counter; updates publish a new Item.
type Item struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Price    int      `json:"price_cents"`
	Stock    int      `json:"stock"`
	Tags     []string `json:"tags,omitempty"`
	Revision int      `json:"revision"`
	views    int      // bumped on every read, outside the store lock (hs-store-views)
}

// Errors of the store.
var (
	ErrNotFound    = errors.New("item not found")
	ErrConflict    = errors.New("revision conflict")
	ErrInvalidItem = errors.New("invalid item")
	ErrConnBroken  = errors.New("backend connection broken")
)

// Store is the simulated database behind the pool: a map of items under a
// lock, and a simulated per-query cost.
type Store struct {
	mu    sync.Mutex
	items map[string]*Item
	// writes counts committed updates, under mu.
	writes int
}

// NewStore returns a store holding n items item-0 .. item-(n-1).
func NewStore(n int) *Store {
	s := &Store{items: make(map[string]*Item, n)}
	for i := 0; i < n; i++ {
		s.publish(newItem("item-"+strconv.Itoa(i), fmt.Sprintf("Product %d", i), 100+i*25, 10+i%7, 1))
	}
	return s
}

// newItem builds an item before it is published. Its fields are written
// here, without the store's lock, and read by handlers after they fetched
// the item under it: the lock orders them (a lockset false alarm).
func newItem(id, name string, price, stock, rev int) *Item {
	it := new(Item)
	it.ID = id
	it.Name = name
	it.Price = price
	it.Stock = stock
	it.Revision = rev // racekit:norace id=hs-item-publish why="an item is built before it is stored under the store lock, and read by update under that lock"
	it.Tags = tagsFor(price)
	return it
}

func tagsFor(price int) []string {
	switch {
	case price < 150:
		return []string{"budget"}
	case price < 250:
		return []string{"standard"}
	default:
		return []string{"premium"}
	}
}

func (s *Store) publish(it *Item) {
	s.mu.Lock()
	s.items[it.ID] = it
	s.mu.Unlock()
}

// simulate burns the CPU time a query would take on the backend.
func simulate(work int) int {
	x := work + 17
	for i := 0; i < work; i++ {
		x = x*1103515245 + 12345
	}
	return x & 1
}

// get fetches an item.
func (s *Store) get(id string, work int) (*Item, error) {
	simulate(work)
	s.mu.Lock()
	it, ok := s.items[id]
	s.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return it, nil
}

// CountView records a read of it, whether it came from the store or the
// cache. The counter is bumped without any lock: concurrent readers of
// the same item lose counts (benign: the count is only reported).
func (s *Store) CountView(it *Item) {
	it.views++ // racekit:race id=hs-store-views kind=race benign=true self flaky racekit:race id=hs-store-views-read kind=race benign=true flaky
}

// update replaces an item if the caller saw its current revision.
func (s *Store) update(id string, price, stock, seenRev, work int) (*Item, error) {
	simulate(work)
	if price <= 0 || stock < 0 {
		return nil, ErrInvalidItem
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.items[id]
	if !ok {
		return nil, ErrNotFound
	}
	if old.Revision != seenRev { // racekit:norace id=hs-item-publish why="see newItem"
		return nil, ErrConflict
	}
	it := newItem(id, old.Name, price, stock, old.Revision+1)
	s.items[id] = it
	s.writes++
	return it, nil
}

// list returns the IDs in order.
func (s *Store) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.items))
	for id := range s.items {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Views returns the (racy) view count of an item, for the stats endpoint.
func (s *Store) Views(id string) int {
	s.mu.Lock()
	it, ok := s.items[id]
	s.mu.Unlock()
	if !ok {
		return 0
	}
	return it.views // racekit:race id=hs-store-views-read kind=race benign=true flaky
}

// Writes is the number of committed updates.
func (s *Store) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}
