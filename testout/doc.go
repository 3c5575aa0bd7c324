// Package testout rewrites go test's output for racekit test: it passes
// the output through as it comes, holding back each package's closing
// lines (or -json events) until the traces its test binary recorded are
// analyzed, so that a package with races closes as it would under go test
// -race, with each racy test's reports and failure. Each trace's analysis
// begins while its binary runs, where the trace can be followed. It also
// keeps what -confirm and -sarif need of the races reported.
package testout
