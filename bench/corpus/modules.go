package main

// Module is one module of the corpus, pinned.
type Module struct {
	Path    string
	Version string
	Why     string // what concurrent code it has
}

// corpus is the pinned list: popular third-party modules with concurrent
// code, old go lines among them (none, 1.7, 1.12, 1.13, 1.15, 1.18, 1.19).
var corpus = []Module{
	{"github.com/benbjohnson/clock", "v1.3.5", "fake clock"},
	{"github.com/jonboulle/clockwork", "v0.5.0", "fake clock"},
	{"github.com/panjf2000/ants/v2", "v2.12.1", "worker pool"},
	{"github.com/alitto/pond", "v1.9.2", "worker pool"},
	{"golang.org/x/sync", "v0.25.0", "errgroup, singleflight, semaphore"},
	{"github.com/patrickmn/go-cache", "v2.1.0+incompatible", "cache (no go.mod)"},
	{"github.com/hashicorp/golang-lru", "v1.0.2", "cache"},
	{"github.com/hashicorp/golang-lru/v2", "v2.0.7", "cache"},
	{"github.com/dgraph-io/ristretto/v2", "v2.4.2", "cache"},
	{"github.com/go-chi/chi/v5", "v5.5.0", "HTTP router"},
	{"github.com/gorilla/mux", "v1.8.1", "HTTP router"},
	{"golang.org/x/time", "v0.16.0", "rate limiter"},
	{"github.com/cenkalti/backoff/v4", "v4.3.0", "retry/backoff"},
	{"go.uber.org/atomic", "v1.11.0", "atomics"},
	{"go.uber.org/goleak", "v1.3.0", "goroutine leak checks"},
	{"github.com/sourcegraph/conc", "v0.3.0", "structured concurrency, pools"},
	{"go.uber.org/ratelimit", "v0.3.1", "rate limiter"},
	{"github.com/cskr/pubsub", "v1.0.2", "pub/sub"},
	{"github.com/gammazero/workerpool", "v1.3.0", "worker pool"},
	{"github.com/orcaman/concurrent-map/v2", "v2.0.1", "sharded map"},
	{"github.com/bluele/gcache", "v0.0.2", "cache"},
	{"github.com/eapache/go-resiliency", "v1.7.0", "breaker, batcher, semaphore, retrier"},
	{"github.com/jpillora/backoff", "v1.1.0", "backoff"},
	{"github.com/sony/gobreaker", "v1.0.0", "circuit breaker"},
	{"github.com/hashicorp/go-multierror", "v1.1.1", "errors, Group"},
	{"github.com/robfig/cron/v3", "v3.0.1", "scheduler"},
	{"github.com/sethvargo/go-retry", "v0.3.0", "retry"},
	{"github.com/julienschmidt/httprouter", "v1.3.0", "HTTP router"},
	{"github.com/gorilla/websocket", "v1.5.3", "websocket"},
	{"github.com/avast/retry-go/v4", "v4.7.0", "retry"},
	{"github.com/golang/groupcache", "v0.0.0-20241129210726-2c02b8208cf8", "singleflight, LRU"},
	{"github.com/puzpuzpuz/xsync/v3", "v3.5.1", "concurrent maps, queues"},
	// Added in session 25 and run first there, before any change made for
	// them: modules racekit had not been tried on.
	{"github.com/allegro/bigcache/v3", "v3.1.0", "sharded cache, cleanup goroutine"},
	{"github.com/go-chi/httprate", "v0.16.1", "HTTP rate limiter"},
	{"github.com/go-co-op/gocron/v2", "v2.21.2", "job scheduler, fake clock"},
	{"github.com/gofrs/flock", "v0.13.2", "file locks"},
	{"github.com/google/btree", "v1.1.3", "copy-on-write B-tree"},
	{"github.com/hashicorp/go-memdb", "v1.3.5", "MVCC in-memory database, watches"},
	{"github.com/hashicorp/yamux", "v0.1.2", "stream multiplexer over net.Conn"},
	{"github.com/oklog/run", "v1.2.0", "actor groups"},
	{"github.com/oklog/ulid/v2", "v2.1.2", "IDs, locked entropy"},
	{"github.com/sirupsen/logrus", "v1.10.2", "logger, hooks under a mutex"},
	{"github.com/tidwall/btree", "v1.8.2", "B-tree with copy-on-write, locks"},
	{"github.com/VictoriaMetrics/fastcache", "v1.13.2", "sharded byte cache"},
	{"go.uber.org/zap", "v1.28.0", "logger, buffered writers, pools"},
	{"gopkg.in/natefinch/lumberjack.v2", "v2.2.1", "rotating file writer, mill goroutine"},
	{"github.com/jellydator/ttlcache/v3", "v3.4.1", "TTL cache, expiry goroutine"},
	{"github.com/coocood/freecache", "v1.2.7", "segmented cache, atomics"},
	{"github.com/eapache/channels", "v1.1.0", "channel adapters"},
	{"github.com/smallnest/chanx", "v1.2.0", "unbounded channel"},
	{"github.com/asaskevich/EventBus", "v0.0.0-20200907212545-49d423059eef", "event bus, async handlers"},
	{"github.com/reugn/go-quartz", "v0.15.2", "job scheduler"},
	{"github.com/rcrowley/go-metrics", "v0.0.0-20250401214520-65e299d6c5c9", "metrics, atomics, registries"},
	{"github.com/armon/go-metrics", "v0.7.0", "metrics sinks, aggregation"},
	{"github.com/jackc/puddle/v2", "v2.2.3", "resource pool"},
	{"github.com/golang/glog", "v1.2.5", "logger, flush daemon"},
	{"github.com/dustin/go-broadcast", "v0.0.0-20171205050544-f664265f5a66", "broadcaster"},
	// Added in session 26 and run there before any change made for them.
	{"github.com/coder/websocket", "v1.8.15", "websocket, concurrent reads and writes"},
	{"github.com/fsnotify/fsnotify", "v1.10.1", "file watcher, event goroutine"},
	{"github.com/hashicorp/go-retryablehttp", "v0.7.8", "HTTP client retries, test servers"},
	{"github.com/alicebob/miniredis/v2", "v2.40.0", "Redis server, connection goroutines, pub/sub"},
	{"github.com/sony/gobreaker/v2", "v2.4.0", "circuit breaker, mutex, generation"},
	{"github.com/hashicorp/memberlist", "v0.7.0", "gossip membership, UDP/TCP goroutines"},
	{"go.etcd.io/bbolt", "v1.5.0", "B+tree database, transactions under locks"},
	{"github.com/puzpuzpuz/xsync/v4", "v4.5.0", "concurrent maps, queues, atomics"},
	{"github.com/cschleiden/go-workflows", "v1.2.0", "workflow engine, workers, in-memory backend"},
}
