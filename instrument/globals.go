package instrument

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// globalNames writes, for a file that declares package-level variables,
// the declaration that names them in the trace (rt.Globals): a report then
// says which variable a raced address is in ("global p.x+8"), as Go's race
// report does.
func (r *rewriter) globalNames(b *strings.Builder) {
	pkg := ""
	if r.in.Pkg != nil {
		pkg = r.in.Pkg.Path()
	}
	n := 0
	for _, d := range r.in.File.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, sp := range gd.Specs {
			for _, id := range sp.(*ast.ValueSpec).Names {
				if id.Name == "_" {
					continue
				}
				if n == 0 {
					b.WriteString("var _ = " + rtAlias + ".Globals(")
				} else {
					b.WriteString(", ")
				}
				b.WriteString("&" + id.Name + ", " + strconv.Quote(pkg+"."+id.Name))
				n++
			}
		}
	}
	if n > 0 {
		b.WriteString(")\n")
	}
}
