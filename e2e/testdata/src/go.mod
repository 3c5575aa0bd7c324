module racekit.test/e2e

go 1.26
