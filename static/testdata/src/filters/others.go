package filters

type box struct{ v int }

var pub *box

// threadLocal: the goroutine allocates and initializes b, then publishes
// it; the spawner reads it through pub. The paper's filter 1 removes it
// (and, since b.v and pub.v are different lvalues, so would large-reps).
func threadLocal() int {
	go func() {
		b := &box{}
		b.v = 1
		pub = b // want `potential race on filters.pub: write at others.go:14:3 in goroutine threadLocal\$1 started at others.go:11:2 holding no lock, and write at others.go:14:3 in another instance` `potential race on filters.pub: write at others.go:14:3 in goroutine threadLocal\$1 started at others.go:11:2 holding no lock, and read at others.go:16:9 in threadLocal after the go statement`
	}()
	return pub.v
}

// notThreadLocal: x was allocated before the go statement: kept.
func notThreadLocal() int {
	x := &box{}
	go func() {
		x.v = 1 // want `potential race on x.v: write at others.go:23:5 in goroutine notThreadLocal\$1 started at others.go:22:2 holding no lock, and read at others.go:25:11 in notThreadLocal after the go statement`
	}()
	return x.v
}

// twoParams: a.v and b.v alias only because callTwo passes the same box:
// the points-to class decides, not the lvalue. large-reps removes it.
func twoParams(a, b *box) int {
	go func() { a.v = 1 }() // want `potential race on a.v: write at others.go:31:16 in goroutine twoParams\$1 started at others.go:31:2 holding no lock, and write at others.go:31:16 in another instance`
	return b.v
}

func callTwo() {
	x := &box{}
	twoParams(x, x)
}

// oneParam: the same lvalue on both sides: kept.
func oneParam(a *box) int {
	go func() { a.v = 1 }() // want `potential race on a.v: write at others.go:42:16 in goroutine oneParam\$1 started at others.go:42:2 holding no lock, and read at others.go:43:11 in oneParam after the go statement` `potential race on a.v: write at others.go:42:16 in goroutine oneParam\$1 started at others.go:42:2 holding no lock, and write at others.go:42:16 in another instance`
	return a.v
}

var cfg, cfg2 int

// init starts a goroutine during package initialization: bootup removes it.
func init() {
	go func() { cfg = 1 }()
	_ = cfg
}

// notBoot: the same outside initialization: kept.
func notBoot() int {
	go func() { cfg2 = 1 }() // want `potential race on filters.cfg2: write at others.go:56:14 in goroutine notBoot\$1 started at others.go:56:2 holding no lock, and read at others.go:57:9 in notBoot after the go statement` `potential race on filters.cfg2: write at others.go:56:14 in goroutine notBoot\$1 started at others.go:56:2 holding no lock, and write at others.go:56:14 in another instance`
	return cfg2
}

var counter, counter2 int

// sameEntry: instances of one goroutine race with each other. same-entry
// matches it but is off by default: kept.
func sameEntry(n int) {
	for i := 0; i < n; i++ {
		go func() { counter++ }() // want `potential race on filters.counter: write at others.go:66:15 in goroutine sameEntry\$1 started at others.go:66:3 holding no lock, and read at others.go:66:15 in another instance of the same goroutine holding no lock`
	}
}

func incA() {
	counter2++ // want `potential race on filters.counter2: read at others.go:71:2 in goroutine incA started at others.go:80:2 holding no lock, and write at others.go:75:2 in goroutine incB started at others.go:81:2 holding no lock` `potential race on filters.counter2: write at others.go:71:2 in goroutine incA started at others.go:80:2 holding no lock, and read at others.go:71:2 in another instance`
}

func incB() {
	counter2++ // want `potential race on filters.counter2: write at others.go:75:2 in goroutine incB started at others.go:81:2 holding no lock, and read at others.go:75:2 in another instance`
}

// twoEntries: different entry functions: same-entry does not match.
func twoEntries() {
	go incA()
	go incB()
}

// newBox initializes the box before anyone else can see it.
func newBox() *box {
	b := &box{}
	b.v = 7
	return b
}

var shared *box

// unpublished: the write in newBox happens before the box is published;
// the write after publication does not.
func unpublished() int {
	go func() {
		b := newBox()
		shared = b // want `potential race on filters.shared: write at others.go:98:3 in goroutine unpublished\$1 started at others.go:96:2 holding no lock, and write at others.go:98:3 in another instance` `potential race on filters.shared: write at others.go:98:3 in goroutine unpublished\$1 started at others.go:96:2 holding no lock, and read at others.go:101:9 in unpublished after the go statement`
		b.v = 8
	}()
	return shared.v
}
