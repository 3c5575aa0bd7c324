package testmainpkg

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	Total = 1
	code := m.Run()
	fmt.Println("total", Total)
	os.Exit(code)
}

func TestAdd(t *testing.T) {
	t.Parallel()
	Total += 2
}
