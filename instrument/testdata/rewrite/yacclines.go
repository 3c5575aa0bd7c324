// goyacc's output: //line directives without a column. Text the rewriter
// moves keeps its line with a /*line file:N*/ of no column (the compiler
// refuses column 0).
package p

//line yaccpar:1
func yyParse(c chan []int, f func() []int) {
	c <- f()
	c <- append(f(),
		1)
}
