package rt

import (
	"reflect"
	"slices"
)

// Channel operations through package reflect (reflect.Select, Value.Send,
// Recv, TrySend, TryRecv, Close), recorded as the statements they stand
// for are (chan.go): a worker that hands channels to a loop on
// reflect.Select (eapache/channels' SharedBuffer) received them with no
// edge from the sends, and everything the sender wrote before raced.

// reflectChan returns the channel v holds, as an interface value for the
// channel hooks, or nil (not a channel, or one reflect does not let out).
func reflectChan(v reflect.Value) any {
	if !v.IsValid() || v.Kind() != reflect.Chan || !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// ReflectSelect is reflect.Select(cases), recorded as a select statement
// with those cases: each case's pre-operation, the controlled scheduler's
// choice (the other cases' channels then nil), the chosen case's
// post-operation.
func ReflectSelect(cases []reflect.SelectCase, site uint32, rec bool) (int, reflect.Value, bool) {
	if !ctl && !on {
		return reflect.Select(cases)
	}
	chans := make([]any, len(cases))
	def := false
	for i, c := range cases {
		switch c.Dir {
		case reflect.SelectDefault:
			def = true
		case reflect.SelectSend:
			if chans[i] = reflectChan(c.Chan); chans[i] != nil {
				SelectSendPre(chans[i], site, rec)
			}
		case reflect.SelectRecv:
			if chans[i] = reflectChan(c.Chan); chans[i] != nil {
				RecvPre(chans[i], site)
			}
		}
	}
	run := cases
	if pick := SelectWait(def); pick != -1 {
		run = slices.Clone(cases)
		k := 0
		for i := range run {
			if chans[i] != nil {
				if k != pick {
					run[i].Chan = reflect.Value{}
				}
				k++
			}
		}
	}
	chosen, v, ok := reflect.Select(run)
	if c := chans[chosen]; c != nil {
		if cases[chosen].Dir == reflect.SelectSend {
			SelectSendPost(c, site)
		} else {
			recvPost(c, site, nil, recvKind(ok))
		}
	}
	return chosen, v, ok
}

// ReflectSend is v.Send(x), recorded as a send statement.
func ReflectSend(v, x reflect.Value, site uint32, rec bool) {
	c := reflectChan(v)
	if c == nil || !ctl && !on {
		v.Send(x)
		return
	}
	g := SendPreG(c, site, rec, nil)
	v.Send(x)
	SendPost(c, site, g)
}

// ReflectRecv is v.Recv(), recorded as a receive.
func ReflectRecv(v reflect.Value, site uint32, rec bool) (reflect.Value, bool) {
	c := reflectChan(v)
	if c == nil || !ctl && !on {
		return v.Recv()
	}
	g := RecvRangeG(c, site, nil)
	x, ok := v.Recv()
	recvPost(c, site, g, recvKind(ok))
	return x, ok
}

// ReflectTrySend is v.TrySend(x), recorded as a select with that send
// case and a default.
func ReflectTrySend(v, x reflect.Value, site uint32, rec bool) bool {
	c := reflectChan(v)
	if c == nil || !ctl && !on {
		return v.TrySend(x)
	}
	SelectSendPre(c, site, rec)
	if SelectWait(true) == -2 {
		return false // the controlled scheduler chose the default
	}
	ok := v.TrySend(x)
	if ok {
		SelectSendPost(c, site)
	}
	return ok
}

// ReflectTryRecv is v.TryRecv(), recorded as a select with that receive
// case and a default: a receive that got a value, or found the channel
// closed (a valid zero value, ok false), completed.
func ReflectTryRecv(v reflect.Value, site uint32, rec bool) (reflect.Value, bool) {
	c := reflectChan(v)
	if c == nil || !ctl && !on {
		return v.TryRecv()
	}
	RecvPre(c, site)
	if SelectWait(true) == -2 {
		return reflect.Value{}, false // the default, as above
	}
	x, ok := v.TryRecv()
	if ok || x.IsValid() {
		recvPost(c, site, nil, recvKind(ok))
	}
	return x, ok
}

// ReflectClose is v.Close(), recorded as a close.
func ReflectClose(v reflect.Value, site uint32, rec bool) {
	c := reflectChan(v)
	if c != nil {
		closePre(c, site, rec)
	}
	v.Close()
}
