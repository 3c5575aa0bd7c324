package racysubtest

import "testing"

func TestParent(t *testing.T) {
	t.Run("calm", func(t *testing.T) {})
	t.Run("racy", func(t *testing.T) { Twice() })
	t.Run("after", func(t *testing.T) {})
}

func TestSkip(t *testing.T) { t.Skip("skipped") }
