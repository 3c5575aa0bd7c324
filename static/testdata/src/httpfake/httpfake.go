// Package httpfake stands in for net/http in tests (analyzing the real one
// and its dependencies takes minutes): export_test.go registers these
// functions as handler registrations.
package httpfake

type ResponseWriter interface{ Write([]byte) (int, error) }

type Request struct{ Path string }

type Handler interface {
	ServeHTTP(ResponseWriter, *Request)
}

type ServeMux struct{ m map[string]Handler }

type HandlerFunc func(ResponseWriter, *Request)

func (f HandlerFunc) ServeHTTP(w ResponseWriter, r *Request) { f(w, r) }

var DefaultServeMux = &ServeMux{m: map[string]Handler{}}

func NewServeMux() *ServeMux { return &ServeMux{m: map[string]Handler{}} }

func (mux *ServeMux) Handle(pattern string, h Handler) { mux.m[pattern] = h }

func (mux *ServeMux) HandleFunc(pattern string, f func(ResponseWriter, *Request)) {
	mux.m[pattern] = HandlerFunc(f)
}

func Handle(pattern string, h Handler) { DefaultServeMux.Handle(pattern, h) }

func HandleFunc(pattern string, f func(ResponseWriter, *Request)) {
	DefaultServeMux.HandleFunc(pattern, f)
}
