package dirfs

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The fdFS's calls on the bundle's files and folders are made as raw
// system calls: the Go scheduler is not told, so a call does not hand its
// P to another thread when it outlasts a sysmon tick (20 µs). On a bundle
// of 86,000 small files those hand-offs, the futex wake-ups of idle
// threads and sysmon kept at its 20 µs tick were a third of the system
// time. The calls are short ones on an open descriptor or one name in a
// held folder; a call that blocks (a slow NFS or FUSE server) holds its P
// until it returns, as a page fault on mapped memory would. A large read
// (a block's chunk, which on a cold cache waits for the disk) is a plain
// system call, so the other goroutines keep the P meanwhile.

func rawOpenat(dir int, name string, flags int, mode uint32) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	for {
		r, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(flags), uintptr(mode), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(r), nil
	}
}

func rawPread(fd int, p []byte, off int64) (int, error) {
	if len(p) > rawReadMax {
		return unix.Pread(fd, p, off)
	}
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	r, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(ptr), uintptr(len(p)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// rawReadMax is the largest read made raw: the small-file buffer (32 KiB)
// and a block's head.
const rawReadMax = 64 << 10

func rawGetdents(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawClose(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func rawFstat(fd int, st *unix.Stat_t) error {
	_, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	if e != 0 {
		return e
	}
	return nil
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}
