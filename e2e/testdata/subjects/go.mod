module racekit.test/subjects

go 1.26
