//go:build linux

package storeparse

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// adviseSequential tells the kernel that f (a block file, when it has a
// descriptor) is read once from start to end: POSIX_FADV_SEQUENTIAL widens
// its read-ahead, so a block not in the page cache is mostly read before the
// scan asks for it. Measured on the 2.2 GiB store with a cold page cache:
// 2.2-2.8 s wall and 0.55-0.65 CPU-s to read it in 256 KiB preads, against
// 3.1-4.2 s and 0.72-0.95 CPU-s without the advice (mapping it: 9-13 s, 2.1-2.8
// CPU-s).
func adviseSequential(f any) {
	sc, ok := f.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { _ = unix.Fadvise(int(fd), 0, 0, unix.FADV_SEQUENTIAL) })
}
