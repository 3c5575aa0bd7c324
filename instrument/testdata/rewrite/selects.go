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
// goes on the block around it, so the goto evaluates the channels and
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

// A select a goto jumps to and a break names: the block cannot take the
// label, so the select is left as written.
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
