//go:build !linux

package storeparse

// adviseSequential gives no advice on this system.
func adviseSequential(f any) {}
