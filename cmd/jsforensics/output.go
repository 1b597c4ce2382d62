package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// stdoutName is the output path that means standard output.
const stdoutName = "-"

// resolved is path made absolute with every symlink of it resolved, as far
// as it exists: a path not yet created resolves through its nearest
// existing folder.
func resolved(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest), nil
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// within says whether p is root or inside it (both resolved).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// inputGuard refuses output paths that would write into what is being read:
// the bundle (a folder, an archive) or a saved report. Every output flag of
// every command goes through it.
type inputGuard struct {
	input    string // as given
	resolved string
	info     fs.FileInfo // nil when the input cannot be stat'ed
}

func newInputGuard(input string) (*inputGuard, error) {
	r, err := resolved(input)
	if err != nil {
		return nil, err
	}
	g := &inputGuard{input: input, resolved: r}
	if fi, err := os.Stat(r); err == nil {
		g.info = fi
	}
	return g, nil
}

// refuse returns an error when writing to out (given as flag) would write
// into the input: inside its folder, on the input file itself (by path,
// symlink or hard link).
func (g *inputGuard) refuse(flag, out string) error {
	if out == "" || out == stdoutName {
		return nil
	}
	r, err := resolved(out)
	if err != nil {
		return err
	}
	inside := false
	switch {
	case g.info != nil && g.info.IsDir():
		inside = within(g.resolved, r)
	default:
		inside = r == g.resolved
		if fi, err := os.Stat(r); err == nil && g.info != nil && os.SameFile(fi, g.info) {
			inside = true
		}
	}
	if inside {
		return fmt.Errorf("%s %s is inside %s, which is being read: jsforensics never writes into its input; write elsewhere", flag, out, g.input)
	}
	return nil
}

// refuseDir is refuse for a folder the command creates files in (--tmpdir).
func (g *inputGuard) refuseDir(flag, dir string) error {
	if dir == "" || g.info == nil || !g.info.IsDir() {
		return nil
	}
	r, err := resolved(dir)
	if err != nil {
		return err
	}
	if within(g.resolved, r) {
		return fmt.Errorf("%s %s is inside %s, which is being read: jsforensics never writes into its input; give a folder outside it", flag, dir, g.input)
	}
	return nil
}

// output is one file a command writes: written under a temporary name in
// the same folder and renamed over the target only when complete, so a
// failed run leaves no partial file and never writes into an existing file
// (nor, through a hard link, into another).
type output struct {
	path string
	tmp  *os.File
}

// checkOutput refuses out when it exists and force is not set; "-" and ""
// are standard output.
func checkOutput(flag, out string, force bool) error {
	if out == "" || out == stdoutName || force {
		return nil
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s %s exists: give --force to replace it", flag, out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// createOutput opens out for writing (see output); nil for standard output.
func createOutput(out string) (*output, error) {
	if out == "" || out == stdoutName {
		return nil, nil
	}
	dir, base := filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".jsforensics-*")
	if err != nil {
		return nil, err
	}
	return &output{path: out, tmp: tmp}, nil
}

func (o *output) Write(p []byte) (int, error) { return o.tmp.Write(p) }

// finish closes the file and, when err is nil, moves it to its name;
// otherwise removes it. It returns the first error.
func (o *output) finish(err error) error {
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	// The file keeps CreateTemp's mode 0600: a report names a customer's
	// servers, streams and subjects.
	if err == nil {
		err = os.Rename(o.tmp.Name(), o.path)
	}
	if err != nil {
		_ = os.Remove(o.tmp.Name())
	}
	return err
}

// writerOr is o, or w when o is standard output.
func (o *output) writerOr(w io.Writer) io.Writer {
	if o == nil {
		return w
	}
	return o
}

// sameTarget says whether a and b name one file (as resolved).
func sameTarget(a, b string) bool {
	ra, err1 := resolved(a)
	rb, err2 := resolved(b)
	return err1 == nil && err2 == nil && ra == rb
}
