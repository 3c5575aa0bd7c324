module github.com/racekit/racekit

go 1.26
