package raytracer

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One thread: the checksum validates the image.
func TestSequentialChecksum(t *testing.T) {
	r := Run(Config{Width: 10, Height: 8, Threads: 1})
	if r.Checksum != r.Image || r.Image == 0 || r.Rays < 80 {
		t.Fatalf("got %+v", r)
	}
}

// Two threads render the same image (the races do not touch pixels);
// the checksum may lose an update.
func TestConcurrentImage(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	seq := cfg
	seq.Threads = 1
	want := Run(seq)
	r := Run(cfg)
	if r.Image != want.Image {
		t.Fatalf("image sum %d, want %d", r.Image, want.Image)
	}
	if r.Checksum != r.Image {
		t.Logf("checksum race: %d vs image %d", r.Checksum, r.Image)
	}
}
