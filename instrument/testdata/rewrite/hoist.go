// Writes whose right-hand side calls or receives are recorded after it.
package p

var shared []int
var pair [2]int

func produce() []int { return []int{1} }

func two() (int, int) { return 1, 2 }

func hoist(c chan int, p *[2]int) {
	shared = produce()
	pair[0], pair[1] = two()
	p[0] = <-c
	p[1] += <-c + 1
	shared = append(shared,
		produce()...)
}
