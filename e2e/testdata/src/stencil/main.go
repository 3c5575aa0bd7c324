// Strided loops and rows of a slice of slices, each recorded as one range
// per row, offset and direction before the loop (instrument/fillloop.go):
// a red-black sweep's reads of the neighbouring rows race with another
// goroutine's write of one cell, and so do a column's reads (a matrix
// product's inner loop) but not with a write of the next column; two goroutines that write the even and the
// odd elements of one row (8-byte and 4-byte elements) do not race, nor do
// sweeps of two bands ordered by a receive.
package main

import "fmt"

const n = 64

func sweep(g [][]float64, lo, hi, colour int) {
	for i := lo; i < hi; i++ {
		for j := 1 + (i+colour)%2; j < n-1; j += 2 {
			g[i][j] = 0.25 * (g[i-1][j] + g[i+1][j] + g[i][j-1] + g[i][j+1]) // race: cell
		}
	}
}

func dot(a, b [][]float64, i, j int) float64 {
	s := 0.0
	for k := 0; k < n; k++ {
		s += a[i][k] * b[k][j] // race: column
	}
	return s
}

func every2(row []float64, first int, v float64) {
	for j := first; j < len(row); j += 2 {
		row[j] = v
	}
}

func every2f32(row []float32, first int, v float32) {
	for j := first; j < len(row); j += 2 {
		row[j] = v
	}
}

func main() {
	g := make([][]float64, n)
	for i := range g {
		g[i] = make([]float64, n)
	}
	done := make(chan bool)

	// Two bands, each half-sweep ordered by the receives.
	for colour := 0; colour < 2; colour++ {
		go func() {
			sweep(g, 1, n/2, colour)
			done <- true
		}()
		sweep(g, n/2, n-1, colour)
		<-done
	}

	// A write of one cell beside a sweep that reads it as a neighbour.
	go func() {
		sweep(g, 10, 12, 0)
		done <- true
	}()
	g[12][8] = 1 // race: cell
	<-done

	// A matrix product's column j beside a write of column j+1 (no race)
	// and of one cell of column j.
	var d float64
	go func() {
		d = dot(g, g, 3, 20)
		done <- true
	}()
	g[40][21] = 2
	g[41][20] = 3 // race: column
	<-done

	// Even and odd elements of one row, by two goroutines at once.
	row := make([]float64, 4*n)
	go func() {
		every2(row, 0, 1)
		done <- true
	}()
	every2(row, 1, 2)
	<-done

	small := make([]float32, 4*n)
	go func() {
		every2f32(small, 0, 1)
		done <- true
	}()
	every2f32(small, 1, 2)
	<-done
	fmt.Println(g[5][5], d, row[0]+row[1], small[0]+small[1])
}
