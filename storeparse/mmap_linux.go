//go:build linux

package storeparse

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only (PROT_READ: nothing can be written
// through the mapping) and tells the kernel the pages will be read in order
// (MADV_SEQUENTIAL: aggressive readahead when the file is not cached). ok is
// false when f cannot be mapped; the caller then reads it with ReadAt.
//
// Mapping saves copying every byte out of the page cache; the checksums are
// computed on the page cache pages themselves.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	var merr error
	cerr := rc.Control(func(fd uintptr) {
		data, merr = syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	})
	if cerr != nil || merr != nil {
		return nil, nil, false
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return data, func() { _ = syscall.Munmap(data) }, true
}
