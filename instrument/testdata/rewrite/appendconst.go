package p

type number string

// A typed constant of another type than the element's (json-iterator's
// append(marshalCases, json.Number(""))) is converted, as append converts
// it: rt.Append's type inference would take the constant's type.
func appendConst(cases []interface{}, ns []number, fs []float64) ([]interface{}, []number, []float64) {
	cases = append(cases, number(""), 1, nil)
	ns = append(ns, "x", number("y"))
	fs = append(fs, 1, 2.5)
	return cases, ns, fs
}
