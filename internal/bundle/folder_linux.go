package bundle

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux the folders being unpacked into are held as descriptors and
// files made with raw system calls: an os.File costs five more calls a
// file (its poller registration, refused for a regular file, and the
// flags set and reset around it), and a time set by name two (a readlinkat
// check, then utimensat); here a file is openat, writes, futimens, close.
// Every name is one element opened with O_NOFOLLOW beneath a folder this
// extractor made, so nothing resolves outside the unpack folder.

type fdFolder int

func openTop(dst *os.Root) (openFolder, error) {
	f, err := dst.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: ".", Err: err}
	}
	unix.CloseOnExec(fd)
	return fdFolder(fd), nil
}

func (d fdFolder) mkdir(name string) error {
	for {
		if err := unix.Mkdirat(int(d), name, 0o755); err != unix.EINTR {
			return pathErr("mkdirat", name, err)
		}
	}
}

func (d fdFolder) close() { unix.Close(int(d)) }

func (d fdFolder) open(name string) (openFolder, error) {
	fd, err := openat(int(d), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("openat", name, err)
	}
	return fdFolder(fd), nil
}

func (d fdFolder) create(name string) (newFile, error) {
	fd, err := openat(int(d), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, pathErr("openat", name, err)
	}
	return fdFile{fd, name}, nil
}

func openat(dir int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

type fdFile struct {
	fd   int
	name string
}

func (f fdFile) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Write(f.fd, p[done:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, pathErr("write", f.name, err)
		}
		done += n
	}
	return done, nil
}

func (f fdFile) finish(mtime time.Time) error {
	if !mtime.IsZero() {
		// utimensat with no path sets the times of fd itself (futimens).
		ts := [2]unix.Timespec{unix.NsecToTimespec(mtime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
		_, _, _ = unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(f.fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	}
	return pathErr("close", f.name, unix.Close(f.fd))
}

// pathErr wraps a system call's error as os does (errors.Is(err,
// fs.ErrExist) holds for EEXIST).
func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: name, Err: err}
}
