// An empty program: its times are each build's fixed start-up cost.
package main

func main() {}
