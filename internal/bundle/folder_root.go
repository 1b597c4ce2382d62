//go:build !linux

package bundle

import (
	"os"
	"time"
)

type rootFolder struct{ r *os.Root }

func openTop(dst *os.Root) (openFolder, error) {
	r, err := dst.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	return rootFolder{r}, nil
}

func (f rootFolder) mkdir(name string) error { return f.r.Mkdir(name, 0o755) }
func (f rootFolder) close()                  { f.r.Close() }

func (f rootFolder) open(name string) (openFolder, error) {
	r, err := f.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return rootFolder{r}, nil
}

func (f rootFolder) create(name string) (newFile, error) {
	file, err := f.r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return rootFile{file, f.r, name}, nil
}

type rootFile struct {
	*os.File
	dir  *os.Root
	name string
}

func (f rootFile) finish(mtime time.Time) error {
	err := f.File.Close()
	if !mtime.IsZero() {
		_ = f.dir.Chtimes(f.name, mtime, mtime)
	}
	return err
}
