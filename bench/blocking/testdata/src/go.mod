module racekit.test/blocking

go 1.26
