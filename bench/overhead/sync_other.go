//go:build !unix

package main

func flushDirty() {}
