package pecanatomic

import "testing"

func TestShop(t *testing.T) {
	if stock, _ := Run(); stock < 0 {
		t.Errorf("stock %d: two buyers took the last item", stock)
	}
}
