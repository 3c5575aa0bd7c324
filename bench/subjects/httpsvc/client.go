package httpsvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// LoadConfig sizes a load-generator run.
type LoadConfig struct {
	Clients  int // client goroutines, each with its own keep-alive connection
	Requests int // requests per client
	Items    int // catalog size
	Reload   bool
	Service  *Config // nil: DefaultServiceConfig()
}

// DefaultConfig is the size the test uses.
func DefaultConfig() LoadConfig {
	return LoadConfig{Clients: 4, Requests: 20, Items: 8, Reload: true}
}

// LoadResult is what the clients saw.
type LoadResult struct {
	ByStatus   map[int]int // responses by HTTP status
	Gets       int         // successful item reads
	CachedGets int         // of which served from the cache
	Updates    int         // successful updates
	Conflicts  int         // updates refused for a stale revision
	BadItems   int         // item responses whose id did not match the request
	Stats      statsView   // the final /stats
	RouteTotal int         // the server's locked per-route total
	Requests   int         // requests the clients sent (stats excluded)
	Shutdown   map[int]int // the straggler's statuses during shutdown: 200 or 503
}

// client is one load-generating goroutine's state.
type client struct {
	name string
	base string
	hc   *http.Client
	res  LoadResult
	revs map[string]int // last revision seen per item
}

func newClient(name, base string) *client {
	return &client{
		name: name,
		base: base,
		hc:   &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}},
		res:  LoadResult{ByStatus: map[int]int{}},
		revs: map[string]int{},
	}
}

func (c *client) do(method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Client", c.name)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	c.res.ByStatus[resp.StatusCode]++
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// getItem reads an item and remembers its revision.
func (c *client) getItem(id string) error {
	var v struct {
		ID       string `json:"id"`
		Revision int    `json:"revision"`
		Cached   bool   `json:"cached"`
	}
	code, err := c.do(http.MethodGet, "/item?id="+id, nil, &v)
	if err != nil || code != http.StatusOK {
		return err
	}
	c.res.Gets++
	if v.Cached {
		c.res.CachedGets++
	}
	if v.ID != id {
		c.res.BadItems++
	}
	c.revs[id] = v.Revision
	return nil
}

// updateItem changes an item's price at the revision last seen.
func (c *client) updateItem(id string, price int) error {
	rev, ok := c.revs[id]
	if !ok {
		if err := c.getItem(id); err != nil {
			return err
		}
		rev = c.revs[id]
	}
	var v struct {
		Revision int `json:"revision"`
	}
	code, err := c.do(http.MethodPut, "/item?id="+id, updateRequest{Price: price, Stock: 5, Revision: rev}, &v)
	switch {
	case err != nil:
		return err
	case code == http.StatusOK:
		c.res.Updates++
		c.revs[id] = v.Revision
	case code == http.StatusConflict:
		c.res.Conflicts++
		delete(c.revs, id)
	}
	return nil
}

// run issues the client's share of the load: mostly reads over a skewed
// key distribution, some updates, a look at the stats, and for client 0
// a configuration reload halfway through.
func (c *client) run(idx int, cfg LoadConfig) error {
	x := uint64(idx)*0x9E3779B97F4A7C15 + 5
	for i := 0; i < cfg.Requests; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		key := int((x >> 33) % uint64(cfg.Items))
		if (x>>40)%3 == 0 {
			key %= 2 // hot items
		}
		id := "item-" + strconv.Itoa(key)
		var err error
		switch op := (x >> 20) % 10; {
		case idx == 0 && cfg.Reload && i == cfg.Requests/2:
			ttl, capacity := 50, cfg.Items/2+1
			_, err = c.do(http.MethodPost, "/admin/reload", ConfigPatch{CacheTTLMillis: &ttl, CacheCapacity: &capacity}, nil)
		case op < 7:
			err = c.getItem(id)
		case op < 9:
			err = c.updateItem(id, 100+int(x>>50)%400)
		default:
			_, err = c.do(http.MethodGet, "/health", nil, nil)
		}
		if err != nil {
			return fmt.Errorf("client %d request %d: %v", idx, i, err)
		}
		c.res.Requests++
		if i%5 == 4 {
			if _, err := c.do(http.MethodGet, "/stats", nil, nil); err != nil {
				return fmt.Errorf("client %d stats: %v", idx, err)
			}
		}
	}
	return nil
}

// Run starts the service on a loopback listener, drives it with the
// clients, reads the final stats and shuts everything down.
func Run(cfg LoadConfig) (LoadResult, error) {
	svcCfg := cfg.Service
	if svcCfg == nil {
		svcCfg = DefaultServiceConfig()
	}
	s, err := NewServer(svcCfg, cfg.Items)
	if err != nil {
		return LoadResult{}, err
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close()

	clients := make([]*client, cfg.Clients)
	errs := make([]error, cfg.Clients)
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = newClient("c"+strconv.Itoa(i), ts.URL)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = clients[i].run(i, cfg)
		}(i)
	}
	wg.Wait()
	total := LoadResult{ByStatus: map[int]int{}}
	for i, c := range clients {
		if errs[i] != nil {
			return total, errs[i]
		}
		for code, n := range c.res.ByStatus {
			total.ByStatus[code] += n
		}
		total.Gets += c.res.Gets
		total.CachedGets += c.res.CachedGets
		total.Updates += c.res.Updates
		total.Conflicts += c.res.Conflicts
		total.BadItems += c.res.BadItems
		total.Requests += c.res.Requests
		c.hc.CloseIdleConnections()
	}
	final := newClient("final", ts.URL)
	if _, err := final.do(http.MethodGet, "/stats", nil, &total.Stats); err != nil {
		return total, err
	}
	final.hc.CloseIdleConnections()
	total.RouteTotal = s.metrics.RouteTotal()
	total.Shutdown = shutdown(s, ts.URL, cfg.Items)
	return total, nil
}

// shutdown closes the backend while a straggling client still reads: the
// pool's unlocked closed check meets Close. The straggler's requests get
// 200 or 503; their statuses are returned.
func shutdown(s *Server, base string, items int) map[int]int {
	straggler := newClient("straggler", base)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 6; i++ {
			// Distinct uncached items, so that each read needs the pool.
			if err := straggler.getItem("item-" + strconv.Itoa(items-1-i%items)); err != nil {
				return
			}
			s.cache.Invalidate("item-" + strconv.Itoa(items-1-i%items))
		}
	}()
	s.Close()
	<-done
	straggler.hc.CloseIdleConnections()
	return straggler.res.ByStatus
}
