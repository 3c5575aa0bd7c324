package httpsvc

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Config is the service's tunable configuration. A running server holds a
// pointer to one Config and replaces it on reload; a Config is never
// modified once published.
type Config struct {
	Name          string        `json:"name"`
	CacheTTL      time.Duration `json:"cache_ttl"`
	CacheCapacity int           `json:"cache_capacity"`
	MaxConns      int           `json:"max_conns"`
	QueryDelay    int           `json:"query_delay"` // simulated backend work per query (loop iterations)
	RateLimit     int           `json:"rate_limit"`  // requests per client per window
	RateWindow    time.Duration `json:"rate_window"`
	MaxBodyBytes  int64         `json:"max_body_bytes"`
	ReadOnly      bool          `json:"read_only"`
	Version       int           `json:"version"`
}

// DefaultServiceConfig is the configuration the service starts with.
func DefaultServiceConfig() *Config {
	return &Config{
		Name:          "catalog",
		CacheTTL:      time.Minute,
		CacheCapacity: 64,
		MaxConns:      2,
		QueryDelay:    200,
		RateLimit:     1000,
		RateWindow:    time.Second,
		MaxBodyBytes:  1 << 16,
		Version:       1,
	}
}

// Validate checks a configuration before it is installed.
func (c *Config) Validate() error {
	var problems []string
	if c.Name == "" {
		problems = append(problems, "name is empty")
	}
	if c.CacheTTL <= 0 {
		problems = append(problems, "cache_ttl must be positive")
	}
	if c.CacheCapacity < 1 {
		problems = append(problems, "cache_capacity must be at least 1")
	}
	if c.MaxConns < 1 {
		problems = append(problems, "max_conns must be at least 1")
	}
	if c.QueryDelay < 0 {
		problems = append(problems, "query_delay must not be negative")
	}
	if c.RateLimit < 1 || c.RateWindow <= 0 {
		problems = append(problems, "rate limit and window must be positive")
	}
	if c.MaxBodyBytes < 64 {
		problems = append(problems, "max_body_bytes must be at least 64")
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid configuration: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Clone returns a copy that can be modified before it is published.
func (c *Config) Clone() *Config {
	d := *c // racekit:race id=hs-cfg-pub kind=race benign=false flaky
	return &d
}

// ConfigPatch is the body of a reload request: the fields to change.
type ConfigPatch struct {
	CacheTTLMillis *int  `json:"cache_ttl_ms,omitempty"`
	CacheCapacity  *int  `json:"cache_capacity,omitempty"`
	QueryDelay     *int  `json:"query_delay,omitempty"`
	RateLimit      *int  `json:"rate_limit,omitempty"`
	ReadOnly       *bool `json:"read_only,omitempty"`
}

// Apply returns a new configuration: c with the patch applied and the
// version bumped.
func (p *ConfigPatch) Apply(c *Config) (*Config, error) {
	n := c.Clone()
	if p.CacheTTLMillis != nil {
		n.CacheTTL = time.Duration(*p.CacheTTLMillis) * time.Millisecond
	}
	if p.CacheCapacity != nil {
		n.CacheCapacity = *p.CacheCapacity
	}
	if p.QueryDelay != nil {
		n.QueryDelay = *p.QueryDelay
	}
	if p.RateLimit != nil {
		n.RateLimit = *p.RateLimit
	}
	if p.ReadOnly != nil {
		n.ReadOnly = *p.ReadOnly
	}
	n.Version = c.Version + 1 // racekit:race id=hs-cfg-pub kind=race benign=false flaky
	if err := n.Validate(); err != nil {
		return nil, err
	}
	return n, nil
}

// ParsePatch decodes a reload request body.
func ParsePatch(data []byte) (*ConfigPatch, error) {
	var p ConfigPatch
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("reload body: %v", err)
	}
	return &p, nil
}
