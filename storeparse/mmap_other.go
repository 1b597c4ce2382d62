//go:build !linux

package storeparse

import "os"

// mapFile does not map on this system: blocks are read with ReadAt.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	return nil, nil, false
}
