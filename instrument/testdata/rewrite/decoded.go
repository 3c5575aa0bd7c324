// A decoder's target that is zero before the call gets the objects the
// decoder stored there recorded new (rt.Decoded, rt.DecodeTarget): in an
// assignment, in an if's init. A target with a call in it (evaluated twice
// otherwise), a call whose result a statement drops and a deferred call
// are left alone.
package p

import (
	"encoding/json"
	"io"
)

type config struct{ Tags map[string]string }

func target() *config { return new(config) }

func decode(data []byte, r io.Reader) (any, error) {
	var doc any
	err := json.Unmarshal(data, &doc)
	var c config
	json.NewDecoder(r).Decode(&c)
	if err := json.Unmarshal(data, target()); err != nil {
		return nil, err
	}
	var c2 config
	if err := json.Unmarshal([]byte(`{"Tags":{}}`), &c2); err != nil {
		return nil, err
	}
	defer json.Unmarshal(data, &c)
	return doc, err
}
