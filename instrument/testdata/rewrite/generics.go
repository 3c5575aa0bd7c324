// Accesses inside generic code, through type parameters.
package p

type list[T any] struct {
	items []T
	count int
}

func (l *list[T]) push(v T) {
	l.items = append(l.items, v)
	l.count++
}

func sum[S ~[]E, E int | float64](s S, m map[string]E) E {
	var t E
	for _, v := range s {
		t += v
	}
	for k := range m {
		t += m[k]
	}
	return t
}

type meta interface {
	GetMeta() map[string]any
	SetMeta(map[string]any)
}

// A method of a type parameter's constraint called on a value whose core
// type is a pointer (modelcontextprotocol/go-sdk's injectRequestMeta): the
// call goes through the constraint, as through an interface, and the
// receiver is only read; wrapped as rt.R(params) it would have the type
// *T, which has no methods.
func inject[T any, P interface {
	*T
	meta
}](params P) P {
	if params == nil {
		params = new(T)
	}
	m := params.GetMeta()
	params.SetMeta(m)
	return params
}
