// CPU-bound subject: two goroutines multiply halves of a matrix product
// (reads of shared input slices, writes of disjoint output rows).
package main

import (
	"fmt"
	"sync"
)

const n = 250

func mul(a, b, c [][]float64, lo, hi int) {
	for i := lo; i < hi; i++ {
		row := c[i]
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += a[i][k] * b[k][j]
			}
			row[j] = s
		}
	}
}

func matrix(f func(i, j int) float64) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		for j := range m[i] {
			m[i][j] = f(i, j)
		}
	}
	return m
}

func main() {
	a := matrix(func(i, j int) float64 { return float64(i + j) })
	b := matrix(func(i, j int) float64 { return float64(i - j) })
	c := matrix(func(i, j int) float64 { return 0 })
	var wg sync.WaitGroup
	for _, r := range [][2]int{{0, n / 2}, {n / 2, n}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mul(a, b, c, r[0], r[1])
		}()
	}
	wg.Wait()
	fmt.Println(c[n-1][n-1])
}
