// Leaf functions that record only accesses get a copy as written.
package p

import "math"

type T struct{ seed uint64 }

func (t *T) next() float64 {
	u := [2]float64{}
	for k := range u {
		t.seed = t.seed*6364136223846793005 + 1442695040888963407
		u[k] = float64(t.seed>>11) / float64(1<<53)
	}
	return math.Sqrt(-2*math.Log(u[0])) * math.Cos(2*math.Pi*u[1])
}

func (t *T) reset() { t.seed = 0 }

// set is not a leaf: it calls next.
func (t *T) set(x uint64) {
	t.seed = x
	t.next()
}

func double(x float64) float64 { return 2 * x } // quiet

// scaled is a leaf: the function of the file it calls is quiet.
func (t *T) scaled() float64 { return double(float64(t.seed)) }
