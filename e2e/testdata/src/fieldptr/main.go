// A field written through a pointer by two goroutines; another field of the
// same struct is written by only one of them and does not race.
package main

import (
	"fmt"
	"sync"
)

type account struct {
	balance int
	owner   string
}

func deposit(a *account, n int, wg *sync.WaitGroup) {
	defer wg.Done()
	a.balance += n // race: b
}

func main() {
	a := &account{}
	var wg sync.WaitGroup
	wg.Add(2)
	go deposit(a, 1, &wg)
	go deposit(a, 2, &wg)
	a.owner = "x"
	wg.Wait()
	fmt.Println(a.balance, a.owner)
}
