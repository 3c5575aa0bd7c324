#!/bin/sh
# overhead.sh measures racekit's overhead on the subject programs of
# testdata/subjects (CPU-bound, synchronization-heavy, I/O-bound), side by
# side with the same programs built plainly and with -race, in one run:
#
#	sh e2e/overhead.sh [racekit binary]
#
# For each subject it prints the wall time of the plain binary, of the
# -race binary (the empty subject shows each build's start-up cost), and of
# racekit run's phases (the instrumented program's
# run, recording its trace; the analysis with fasttrack), with the events
# recorded and the trace's bytes per second. Times are the best of three,
# racekit's included (events and bytes are those of its fastest run).
#
# racekit copies its runtime (package rt) from its source tree: the tree it
# was built from, or $RACEKIT_ROOT. To compare two runtimes, run the script
# once per tree with RACEKIT_ROOT set, back to back.
set -e
RACEKIT=${1:-racekit}
cd "$(dirname "$0")/testdata/subjects"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GOWORK=off go build -o "$tmp/plain/" ./...
GOWORK=off go build -race -o "$tmp/race/" ./...
best() { # best of three wall times of a command, in seconds
	b=
	for i in 1 2 3; do
		s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
	done
	printf '%.3f' "$b"
}
printf '%-10s %8s %8s %9s %9s %10s %9s %8s %8s\n' subject plain -race rk-run rk-anlz events MB/s run/plain run/race
for p in empty cpu syncheavy io; do
	plain=$(best "$tmp/plain/$p")
	race=$(best "$tmp/race/$p")
	sec() { case "$1" in *ms) echo "${1%ms} / 1000" | bc -l ;; *µs) echo "${1%µs} / 1000000" | bc -l ;; *s) echo "${1%s}" ;; esac; }
	ran_s=; anlz_s=
	for i in 1 2 3; do
		line=$("$RACEKIT" run -stats "./$p" 2>&1 >/dev/null | grep 'the program ran')
		# racekit run: built in B; the program ran in R and recorded N events (S bytes, ...); analyzed in A (...)
		ran=$(echo "$line" | sed 's/.*the program ran in \([^ ]*\) and.*/\1/')
		anlz=$(echo "$line" | sed 's/.*analyzed in \([^ ]*\) .*/\1/')
		r=$(sec "$ran"); a=$(sec "$anlz")
		if [ -z "$ran_s" ] || [ "$(echo "$r < $ran_s" | bc)" = 1 ]; then
			ran_s=$r
			events=$(echo "$line" | sed 's/.*recorded \([0-9]*\) events.*/\1/')
			bytes=$(echo "$line" | sed 's/.*events (\([0-9]*\) bytes.*/\1/')
		fi
		if [ -z "$anlz_s" ] || [ "$(echo "$a < $anlz_s" | bc)" = 1 ]; then anlz_s=$a; fi
	done
	printf '%-10s %8s %8s %9.3f %9.3f %10s %9.1f %8.1fx %7.2fx\n' "$p" "$plain" "$race" "$ran_s" "$anlz_s" "$events" \
		"$(echo "$bytes / $ran_s / 1000000" | bc -l)" "$(echo "$ran_s / $plain" | bc -l)" "$(echo "$ran_s / $race" | bc -l)"
done
