// Select with send, receive, define, assign, comma-ok and default cases,
// labeled, across several lines.
package p

var last int

func selects(a, b chan int, done <-chan struct{}) {
loop:
	for {
		select {
		case v := <-a:
			last = v
		case b <- last:
			// sent
		case last = <-b:
		case _, ok := <-done:
			if !ok {
				break loop
			}
		default:
		}
	}
}

func selectNoDefault(a chan int) int {
	select {
	case v, ok := <-a:
		if ok {
			return v
		}
	}
	return 0
}

// A select a goto jumps back to (fasthttp's pipeline writer): the label
// goes on a switch around it, so the goto evaluates the channels and
// records the operations again.
func gotoSelect(c chan int, v int) int {
	tries := 0
again:
	select {
	case c <- v:
	default:
		tries++
		if tries < 3 {
			goto again
		}
	}
	return tries
}

// A select a goto jumps to and a break names: the break leaves the
// switch that carries the label, as it left the select.
func gotoBreakSelect(c chan int) int {
	n := 0
again:
	select {
	case v := <-c:
		if v == 0 {
			break again
		}
		n += v
		goto again
	default:
	}
	return n
}

// A goto target's select inside a loop: its unlabelled continue still
// names the loop, and its unlabelled break the select.
func gotoSelectInLoop(c chan int, n int) int {
	sum := 0
	for i := 0; i < n; i++ {
	again:
		select {
		case v := <-c:
			if v < 0 {
				continue
			}
			if v == 0 {
				break
			}
			sum += v
			goto again
		}
	}
	return sum
}
