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
