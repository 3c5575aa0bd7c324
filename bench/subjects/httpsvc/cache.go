package httpsvc

import (
	"container/list"
	"sync"
	"time"
)

// cacheEntry is one cached item.
type cacheEntry struct {
	key        string
	item       *Item
	expires    time.Time
	lastAccess time.Time     // written by Get under the read lock (hs-cache-access)
	hits       int           // written by Get under the read lock (hs-cache-hits)
	elem       *list.Element // position in the LRU list, under the write lock
}

// Cache is a read-through LRU cache of items with a TTL. Lookups take the
// read lock so that they run in parallel; insertions, invalidations and
// evictions take the write lock.
type Cache struct {
	mu       sync.RWMutex
	entries  map[string]*cacheEntry
	lru      *list.List // front: most recently inserted
	capacity int
	ttl      time.Duration
	evicted  int // under the write lock
}

// NewCache returns an empty cache.
func NewCache(capacity int, ttl time.Duration) *Cache {
	return &Cache{entries: map[string]*cacheEntry{}, lru: list.New(), capacity: capacity, ttl: ttl}
}

// Get returns a live cached item. The bookkeeping writes under the read
// lock are the bug: other readers hold the same read lock.
func (c *Cache) Get(key string, now time.Time) (*Item, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[key]
	if !ok || now.After(e.expires) {
		return nil, false
	}
	e.lastAccess = now // racekit:race id=hs-cache-access kind=race benign=false self flaky racekit:norace id=hs-n-evict why="eviction holds the write lock, which excludes every reader"
	e.hits++           // racekit:race id=hs-cache-hits kind=race benign=false self flaky racekit:norace id=hs-n-stats why="Stats holds the write lock, which excludes every reader"
	return e.item, true
}

// Set inserts or replaces an item, evicting the least recently used
// entries beyond capacity.
func (c *Cache) Set(key string, it *Item, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		e.item = it
		e.expires = now.Add(c.ttl)
		c.lru.MoveToFront(e.elem)
		return
	}
	e := &cacheEntry{key: key, item: it, expires: now.Add(c.ttl), lastAccess: now}
	e.elem = c.lru.PushFront(e)
	c.entries[key] = e
	for c.lru.Len() > c.capacity {
		c.evictOldest()
	}
}

// evictOldest drops the back of the LRU list, preferring, among the last
// few, the entry accessed longest ago. Called with the write lock held.
func (c *Cache) evictOldest() {
	victim := c.lru.Back()
	cand := victim
	for i := 0; i < 3 && cand != nil; i++ {
		if cand.Value.(*cacheEntry).lastAccess.Before(victim.Value.(*cacheEntry).lastAccess) { // racekit:norace id=hs-n-evict why="see Get"
			victim = cand
		}
		cand = cand.Prev()
	}
	e := victim.Value.(*cacheEntry)
	c.lru.Remove(victim)
	delete(c.entries, e.key)
	c.evicted++
}

// Invalidate drops a key.
func (c *Cache) Invalidate(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.lru.Remove(e.elem)
		delete(c.entries, key)
	}
}

// Resize changes the capacity (on reload), evicting as needed.
func (c *Cache) Resize(capacity int, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.capacity, c.ttl = capacity, ttl
	for c.lru.Len() > c.capacity {
		c.evictOldest()
	}
}

// CacheStats is a snapshot of the cache.
type CacheStats struct {
	Entries int `json:"entries"`
	Evicted int `json:"evicted"`
	Hits    int `json:"hits"`
}

// Stats counts entries and hits under the write lock (so no reader is
// bumping a hit count meanwhile).
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := CacheStats{Entries: len(c.entries), Evicted: c.evicted}
	for _, e := range c.entries {
		st.Hits += e.hits // racekit:norace id=hs-n-stats why="see Get"
	}
	return st
}
