//go:build z3 && cgo

package solver

/*
#cgo LDFLAGS: -lz3
#include <stdlib.h>
#include <z3.h>
*/
import "C"

import (
	"runtime"
	"sort"
	"time"
	"unsafe"
)

// Z3 is the Backend over the Z3 SMT solver (build tag z3, with cgo and
// libz3): order variables are integer constants, every atom O_a < O_b is a
// Boolean constant p with p → a < b and ¬p → b < a (so that, as in Solver,
// the negation of an atom is the reversed strict atom, and every literal
// is a Boolean constant or its negation, which Z3's check with
// assumptions needs). It exists to cross-check Solver and to compare
// their speed. Budget.Deadline becomes Z3's timeout; Budget.Conflicts is
// not supported (Z3 has no portable conflict limit) and is ignored.
type Z3 struct {
	ctx    C.Z3_context
	slv    C.Z3_solver
	intS   C.Z3_sort
	vars   []C.Z3_ast // order variables
	bools  []C.Z3_ast // Boolean variables by index (index 0: true)
	atoms  map[uint64]int32
	budget Budget
	model  []int
	vals   []bool // value of each Boolean variable in the last model
	closed bool
}

var _ Backend = (*Z3)(nil)

// NewZ3 returns an empty Z3 backend. Call Close to free it (a finalizer
// does it otherwise).
func NewZ3() *Z3 {
	cfg := C.Z3_mk_config()
	ctx := C.Z3_mk_context(cfg)
	C.Z3_del_config(cfg)
	z := &Z3{ctx: ctx, atoms: map[uint64]int32{}}
	z.slv = C.Z3_mk_solver(ctx)
	C.Z3_solver_inc_ref(ctx, z.slv)
	z.intS = C.Z3_mk_int_sort(ctx)
	z.bools = append(z.bools, C.Z3_mk_true(ctx))
	runtime.SetFinalizer(z, (*Z3).Close)
	return z
}

// Close frees the Z3 context.
func (z *Z3) Close() {
	if z.closed {
		return
	}
	z.closed = true
	C.Z3_solver_dec_ref(z.ctx, z.slv)
	C.Z3_del_context(z.ctx)
}

func (z *Z3) fresh(prefix string, s C.Z3_sort) C.Z3_ast {
	p := C.CString(prefix)
	defer C.free(unsafe.Pointer(p))
	return C.Z3_mk_fresh_const(z.ctx, p, s)
}

// NewVar returns a fresh order variable.
func (z *Z3) NewVar() Var {
	z.vars = append(z.vars, z.fresh("o", z.intS))
	return Var(len(z.vars) - 1)
}

// NewBool returns a fresh plain Boolean variable.
func (z *Z3) NewBool() Lit {
	z.bools = append(z.bools, z.fresh("p", C.Z3_mk_bool_sort(z.ctx)))
	return mkLit(int32(len(z.bools)-1), false)
}

// Less returns the atom O_a < O_b.
func (z *Z3) Less(a, b Var) Lit {
	if a < 0 || int(a) >= len(z.vars) || b < 0 || int(b) >= len(z.vars) {
		panic("solver: unknown order variable")
	}
	if a == b {
		return False
	}
	neg := false
	if a > b {
		a, b, neg = b, a, true
	}
	key := uint64(a)<<32 | uint64(b)
	v, ok := z.atoms[key]
	if !ok {
		p := z.NewBool()
		v = p.v()
		z.atoms[key] = v
		ab := C.Z3_mk_lt(z.ctx, z.vars[a], z.vars[b])
		ba := C.Z3_mk_lt(z.ctx, z.vars[b], z.vars[a])
		C.Z3_solver_assert(z.ctx, z.slv, C.Z3_mk_implies(z.ctx, z.bools[v], ab))
		C.Z3_solver_assert(z.ctx, z.slv, C.Z3_mk_implies(z.ctx, C.Z3_mk_not(z.ctx, z.bools[v]), ba))
	}
	return mkLit(v, neg)
}

func (z *Z3) ast(l Lit) C.Z3_ast {
	if l < 0 || int(l.v()) >= len(z.bools) {
		panic("solver: literal from another solver")
	}
	a := z.bools[l.v()]
	if l.neg() {
		return C.Z3_mk_not(z.ctx, a)
	}
	return a
}

// AddClause adds the disjunction of lits.
func (z *Z3) AddClause(lits ...Lit) {
	if len(lits) == 0 {
		C.Z3_solver_assert(z.ctx, z.slv, C.Z3_mk_false(z.ctx))
		return
	}
	args := make([]C.Z3_ast, len(lits))
	for i, l := range lits {
		args[i] = z.ast(l)
	}
	C.Z3_solver_assert(z.ctx, z.slv, C.Z3_mk_or(z.ctx, C.uint(len(args)), &args[0]))
}

// SetBudget bounds each later Solve call (the deadline only).
func (z *Z3) SetBudget(b Budget) { z.budget = b }

// Solve decides the formula conjoined with the assumptions.
func (z *Z3) Solve(assumptions ...Lit) Result {
	z.model, z.vals = nil, nil
	if !z.budget.Deadline.IsZero() {
		ms := time.Until(z.budget.Deadline).Milliseconds()
		if ms <= 0 {
			return Unknown
		}
		params := C.Z3_mk_params(z.ctx)
		C.Z3_params_inc_ref(z.ctx, params)
		name := C.CString("timeout")
		C.Z3_params_set_uint(z.ctx, params, C.Z3_mk_string_symbol(z.ctx, name), C.uint(ms))
		C.free(unsafe.Pointer(name))
		C.Z3_solver_set_params(z.ctx, z.slv, params)
		C.Z3_params_dec_ref(z.ctx, params)
	}
	var r C.Z3_lbool
	if len(assumptions) == 0 {
		r = C.Z3_solver_check(z.ctx, z.slv)
	} else {
		args := make([]C.Z3_ast, len(assumptions))
		for i, l := range assumptions {
			args[i] = z.ast(l)
		}
		r = C.Z3_solver_check_assumptions(z.ctx, z.slv, C.uint(len(args)), &args[0])
	}
	switch r {
	case C.Z3_L_FALSE:
		return Unsat
	case C.Z3_L_UNDEF:
		return Unknown
	}
	m := C.Z3_solver_get_model(z.ctx, z.slv)
	C.Z3_model_inc_ref(z.ctx, m)
	defer C.Z3_model_dec_ref(z.ctx, m)
	vals := make([]int64, len(z.vars))
	for i, v := range z.vars {
		var out C.Z3_ast
		var x C.int64_t
		if C.Z3_model_eval(z.ctx, m, v, true, &out) && C.Z3_get_numeral_int64(z.ctx, out, &x) {
			vals[i] = int64(x)
		}
	}
	// Integer values may tie between variables no atom relates; ranking by
	// (value, index) keeps every strict atom and gives a permutation.
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] < vals[idx[b]] })
	z.model = make([]int, len(vals))
	for rank, i := range idx {
		z.model[i] = rank
	}
	z.vals = make([]bool, len(z.bools))
	for i, b := range z.bools {
		var out C.Z3_ast
		if C.Z3_model_eval(z.ctx, m, b, true, &out) {
			z.vals[i] = C.Z3_get_bool_value(z.ctx, out) == C.Z3_L_TRUE
		}
	}
	return Sat
}

// Positions returns the positions of the order variables in the last model.
func (z *Z3) Positions() []int { return z.model }

// Value returns l's value in the last model.
func (z *Z3) Value(l Lit) bool {
	if z.vals == nil {
		return false
	}
	return z.vals[l.v()] != l.neg()
}
