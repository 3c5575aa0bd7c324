// Package testmainpkg has its own TestMain, which reads state the tests
// wrote after m.Run returns.
package testmainpkg

// Total is written by the tests.
var Total int
