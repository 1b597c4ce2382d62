package storeparse

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// TestProblemsNameTheirStructure breaks one file of a real stream folder
// (v2.15.2-flat, n1, ORDERS) at a time and checks that the problem
// ScanStream reports names the structure that failed, stamped by the
// file's reader, and the file, so the analysis never reads it off a path.
func TestProblemsNameTheirStructure(t *testing.T) {
	st := store(t, "v2.15.2-flat", "n1")
	const dir = "$G/streams/ORDERS"
	flip := func(at int) func([]byte) []byte {
		return func(b []byte) []byte {
			if at < 0 {
				at += len(b)
			}
			b[at] ^= 0x01
			return b
		}
	}
	for _, c := range []struct {
		file   string
		break_ func([]byte) []byte
		want   binfmt.Structure
		is     error
		in     string // the file the error names, when not file
	}{
		{"msgs/1.blk", flip(40), natsfmt.StructBlockRecord, binfmt.ErrChecksum, ""},
		{"msgs/1.blk", func(b []byte) []byte { b[3] = 0x7f; return b }, natsfmt.StructBlockRecord, binfmt.ErrFormat, ""},
		{"msgs/index.db", flip(-1), natsfmt.StructIndexDB, binfmt.ErrChecksum, ""},
		{"meta.sum", flip(0), natsfmt.StructMetaSum, binfmt.ErrChecksum, ""},
		{"meta.sum", func(b []byte) []byte { return b[:5] }, natsfmt.StructMetaSum, binfmt.ErrFormat, ""},
		{"meta.inf", flip(3), natsfmt.StructMetaSum, binfmt.ErrChecksum, "meta.sum"},
		{"meta.inf", func(b []byte) []byte { return b[:len(b)/2] }, natsfmt.StructMetaInf, binfmt.ErrFormat, ""},
		{"obs/PROC/o.dat", flip(0), natsfmt.StructConsumerState, binfmt.ErrFormat, ""},
		{"obs/PROC/meta.inf", func(b []byte) []byte { return b[:1] }, natsfmt.StructMetaInf, binfmt.ErrFormat, ""},
	} {
		fsys := readAtFS(t, st.Root).(fstest.MapFS)
		name, in := dir+"/"+c.file, dir+"/"+c.in
		if c.in == "" {
			in = name
		}
		mf := fsys[name]
		if mf == nil {
			t.Fatalf("%s: no such file in the bundle", name)
		}
		mf.Data = c.break_(append([]byte(nil), mf.Data...))
		sc, err := ScanStream(fs.FS(fsys), dir, ScanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found := false
		for _, p := range sc.Problems {
			var ce *binfmt.CorruptError
			if errors.As(p, &ce) && ce.Structure == c.want && ce.File == in && errors.Is(p, c.is) {
				found = true
			} else if ce != nil && ce.Structure == "" {
				t.Errorf("%s: problem without a structure: %v", name, p)
			}
		}
		if !found {
			t.Errorf("%s broken: no %v problem naming %q in %v", name, c.is, c.want, sc.Problems)
		}
	}
}
