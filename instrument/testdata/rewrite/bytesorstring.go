package p

// append and copy take a source of a type parameter that may be a byte
// slice or a string (go-json-experiment's jsontext.AppendFormat): neither
// AppendSlice nor AppendString accepts it.
func appendFormat[Bytes ~[]byte | ~string](dst []byte, src Bytes) []byte {
	return append(dst, src...)
}

func copyFormat[Bytes ~[]byte | ~string](dst []byte, src Bytes) int {
	return copy(dst, src)
}

func appendBoth(dst []byte, b []byte, s string) []byte {
	dst = appendFormat(dst, b)
	dst = appendFormat(dst, s)
	copyFormat(dst, b)
	return dst
}
