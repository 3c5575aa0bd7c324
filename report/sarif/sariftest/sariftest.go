// Package sariftest validates SARIF logs against the OASIS SARIF 2.1.0
// schema (README.md says where the copy came from), for tests: only test
// binaries import it, so its validator is not linked into racekit.
package sariftest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/racekit/racekit/report/sarif"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed sarif-schema-2.1.0.json
var schemaText []byte

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	if err := c.AddResource(sarif.Schema, bytes.NewReader(schemaText)); err != nil {
		return nil, err
	}
	return c.Compile(sarif.Schema)
})

// Validate checks doc, a SARIF log, against the schema.
func Validate(doc []byte) error {
	s, err := compiled()
	if err != nil {
		return fmt.Errorf("the SARIF schema: %v", err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return s.Validate(v)
}
