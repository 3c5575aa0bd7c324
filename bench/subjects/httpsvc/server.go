package httpsvc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Server is the catalog service.
type Server struct {
	cfg     *Config // replaced on reload, read by every handler: no synchronization
	store   *Store
	pool    *Pool
	cache   *Cache
	metrics *Metrics
	limiter *RateLimiter
	log     *AccessLog
	nextID  atomic.Uint64 // request IDs
	reloads atomic.Int32
	mux     *http.ServeMux
}

// NewServer wires a server over a store of n items.
func NewServer(cfg *Config, items int) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st := NewStore(items)
	s := &Server{
		cfg:     cfg,
		store:   st,
		pool:    NewPool(st, cfg.MaxConns),
		cache:   NewCache(cfg.CacheCapacity, cfg.CacheTTL),
		metrics: NewMetrics(),
		limiter: NewRateLimiter(cfg.RateLimit, cfg.RateWindow),
		log:     NewAccessLog(128),
		mux:     http.NewServeMux(),
	}
	s.route("GET /items", "list", s.handleList)
	s.route("GET /item", "get", s.handleGetItem)
	s.route("PUT /item", "update", s.handleUpdate)
	s.route("GET /stats", "stats", s.handleStats)
	s.route("POST /admin/reload", "reload", s.handleReload)
	s.route("GET /health", "health", s.handleHealth)
	s.route("GET /log", "log", s.handleLog)
	return s, nil
}

// config returns the current configuration. The bug: a plain read of a
// pointer that handleReload replaces concurrently (it should be an
// atomic.Pointer).
func (s *Server) config() *Config {
	return s.cfg // racekit:race id=hs-cfg kind=race benign=false flaky
}

// Handler is the service's root handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Close shuts the backend down (the HTTP listener is closed by its owner).
func (s *Server) Close() { s.pool.Close() }

// apiError is the JSON error body.
type apiError struct {
	Error string `json:"error"`
	ReqID uint64 `json:"request_id"`
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

type ctxHandler func(w http.ResponseWriter, r *http.Request, reqID uint64) error

// httpError carries a status code out of a handler.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) error {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// route registers a handler behind the middleware chain: panic recovery,
// request ID, rate limit, metrics and access log.
func (s *Server) route(pattern, name string, h ctxHandler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		id := s.nextID.Add(1)
		client := r.Header.Get("X-Client")
		if client == "" {
			client = "anonymous"
		}
		defer func() {
			if p := recover(); p != nil {
				writeJSON(rec, http.StatusInternalServerError, apiError{Error: fmt.Sprint("internal error: ", p), ReqID: id})
			}
			d := time.Since(start)
			s.metrics.observe(name, rec.status, d)
			s.log.Record(client, r.Method, r.URL.Path, rec.status, d)
		}()
		rec.Header().Set("X-Request-ID", strconv.FormatUint(id, 10))
		if !s.limiter.Allow(client, start) {
			writeJSON(rec, http.StatusTooManyRequests, apiError{Error: "rate limit exceeded", ReqID: id})
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(rec, r.Body, s.config().MaxBodyBytes) // racekit:race id=hs-cfg-pub kind=race benign=false flaky
		}
		if err := h(rec, r, id); err != nil {
			code := http.StatusInternalServerError
			var he *httpError
			switch {
			case errors.As(err, &he):
				code = he.code
			case errors.Is(err, ErrNotFound):
				code = http.StatusNotFound
			case errors.Is(err, ErrConflict):
				code = http.StatusConflict
			case errors.Is(err, ErrInvalidItem):
				code = http.StatusBadRequest
			case errors.Is(err, ErrPoolClosed):
				code = http.StatusServiceUnavailable
			}
			writeJSON(rec, code, apiError{Error: err.Error(), ReqID: id})
		}
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	_ = enc.Encode(v)
}

// itemID extracts and checks the id parameter.
func itemID(r *http.Request) (string, error) {
	id := r.URL.Query().Get("id")
	if id == "" {
		return "", errorf(http.StatusBadRequest, "missing id")
	}
	if len(id) > 64 || strings.ContainsAny(id, " /\\") {
		return "", errorf(http.StatusBadRequest, "bad id %q", id)
	}
	return id, nil
}

// itemView is an item as the API returns it.
type itemView struct {
	*Item
	Cached bool `json:"cached"`
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, _ uint64) error {
	ids := s.store.list()
	limit := len(ids)
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return errorf(http.StatusBadRequest, "bad limit %q", l)
		}
		limit = min(n, limit)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": ids[:limit], "total": len(ids)})
	return nil
}

// handleGetItem reads through the cache.
func (s *Server) handleGetItem(w http.ResponseWriter, r *http.Request, _ uint64) error {
	id, err := itemID(r)
	if err != nil {
		return err
	}
	now := time.Now()
	if it, ok := s.cache.Get(id, now); ok {
		s.store.CountView(it)
		writeJSON(w, http.StatusOK, itemView{Item: it, Cached: true})
		return nil
	}
	cfg := s.config()
	var it *Item
	err = s.pool.withConn(func(c *Conn) error {
		var qerr error
		it, qerr = c.Query(id, cfg.QueryDelay)
		return qerr
	})
	if err != nil {
		return err
	}
	s.cache.Set(id, it, now)
	s.store.CountView(it)
	writeJSON(w, http.StatusOK, itemView{Item: it})
	return nil
}

// updateRequest is the body of PUT /item.
type updateRequest struct {
	Price    int `json:"price_cents"`
	Stock    int `json:"stock"`
	Revision int `json:"revision"`
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, _ uint64) error {
	id, err := itemID(r)
	if err != nil {
		return err
	}
	cfg := s.config()
	if cfg.ReadOnly { // racekit:race id=hs-cfg-pub kind=race benign=false flaky
		return errorf(http.StatusForbidden, "service is read-only")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return errorf(http.StatusRequestEntityTooLarge, "body: %v", err)
	}
	var req updateRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return errorf(http.StatusBadRequest, "body: %v", err)
	}
	var it *Item
	err = s.pool.withConn(func(c *Conn) error {
		var uerr error
		it, uerr = c.Update(id, req.Price, req.Stock, req.Revision, cfg.QueryDelay) // racekit:race id=hs-cfg-pub kind=race benign=false flaky
		return uerr
	})
	if err != nil {
		return err
	}
	s.cache.Invalidate(id)
	writeJSON(w, http.StatusOK, itemView{Item: it})
	return nil
}

// statsView is the body of GET /stats.
type statsView struct {
	Metrics   Snapshot   `json:"metrics"`
	Pool      PoolStats  `json:"pool"`
	Cache     CacheStats `json:"cache"`
	Writes    int        `json:"writes"`
	Denied    int        `json:"denied"`
	Version   int        `json:"config_version"`
	TopViews  int        `json:"item0_views"`
	LogLines  int        `json:"log_lines"`
	Reloads   int32      `json:"reloads"`
	Requested uint64     `json:"requests_started"`
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request, _ uint64) error {
	v := statsView{
		Metrics:   s.metrics.snapshot(),
		Pool:      s.pool.Stats(),
		Cache:     s.cache.Stats(),
		Writes:    s.store.Writes(),
		Denied:    s.limiter.Denied(),
		Version:   s.config().Version, // racekit:race id=hs-cfg-pub kind=race benign=false flaky
		TopViews:  s.store.Views("item-0"),
		LogLines:  s.log.Total(),
		Reloads:   s.reloads.Load(),
		Requested: s.nextID.Load(),
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// handleReload applies a configuration patch. Building the new Config is
// fine; publishing it with a plain store is the bug.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request, _ uint64) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return errorf(http.StatusRequestEntityTooLarge, "body: %v", err)
	}
	patch, err := ParsePatch(body)
	if err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	next, err := patch.Apply(s.config())
	if err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	s.cfg = next // racekit:race id=hs-cfg kind=race benign=false flaky
	s.cache.Resize(next.CacheCapacity, next.CacheTTL)
	s.limiter.SetLimit(next.RateLimit)
	s.reloads.Add(1)
	writeJSON(w, http.StatusOK, map[string]any{"version": next.Version})
	return nil
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request, _ uint64) error {
	ps := s.pool.Stats()
	status := "ok"
	if ps.Open == s.config().MaxConns && ps.Idle == 0 { // racekit:race id=hs-cfg-pub kind=race benign=false flaky
		status = "saturated"
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": status, "pool": ps})
	return nil
}

func (s *Server) handleLog(w http.ResponseWriter, r *http.Request, _ uint64) error {
	n := 10
	if q := r.URL.Query().Get("n"); q != "" {
		v, err := strconv.Atoi(q)
		if err != nil || v < 1 {
			return errorf(http.StatusBadRequest, "bad n %q", q)
		}
		n = v
	}
	writeJSON(w, http.StatusOK, map[string]any{"lines": s.log.Tail(n)})
	return nil
}
