package logscan

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// isLogName says whether a file in a bundle is a server log.
func isLogName(name string) bool {
	base := path.Base(name)
	if strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".log.gz") {
		return true
	}
	_, _, ok := ParseRotatedName(base)
	return ok
}

// fixtureLogs returns every log of the generator's bundles under
// ../testdata/bundles: loose files in bundle/ directories and members of
// .zip and .tar(.gz) archives.
func fixtureLogs(t *testing.T) map[string][]byte {
	t.Helper()
	root := filepath.Join("..", "testdata", "bundles")
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		switch {
		case strings.HasSuffix(name, ".zip"):
			zr, err := zip.OpenReader(p)
			if err != nil {
				return err
			}
			defer zr.Close()
			for _, f := range zr.File {
				if !isLogName(f.Name) {
					continue
				}
				rc, err := f.Open()
				if err != nil {
					return err
				}
				b, err := io.ReadAll(io.LimitReader(rc, 256<<20))
				rc.Close()
				if err != nil {
					return err
				}
				out[p+"!"+f.Name] = b
			}
		case strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz") || strings.HasSuffix(name, ".tar"):
			fb, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var r io.Reader = bytes.NewReader(fb)
			if !strings.HasSuffix(name, ".tar") {
				zr, err := gzip.NewReader(r)
				if err != nil {
					return err
				}
				r = zr
			}
			tr := tar.NewReader(r)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				if h.Typeflag != tar.TypeReg || !isLogName(h.Name) {
					continue
				}
				b, err := io.ReadAll(io.LimitReader(tr, 256<<20))
				if err != nil {
					return err
				}
				out[p+"!"+h.Name] = b
			}
		case strings.Contains(filepath.ToSlash(p), "/bundle/") && isLogName(name):
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every log in the generator's fixture bundles: every line is counted, no
// line that holds a catalogue key phrase goes unclassified, and each file
// has a banner with a version and a node id.
func TestFixtureBundleLogs(t *testing.T) {
	logs := fixtureLogs(t)
	if len(logs) == 0 {
		t.Skip("no fixture bundles under ../testdata/bundles yet")
	}
	for name, raw := range logs {
		r, err := Decompress(bytes.NewReader(raw))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkKeyPhrases(t, name, data)
		s := NewScanner(bytes.NewReader(data), Options{File: name})
		for s.Next() {
		}
		st := s.Stats()
		if s.Err() != nil {
			t.Errorf("%s: %v", name, s.Err())
		}
		if st.Lines != st.Empty+st.TooLong+st.Classified+st.Unknown || st.Lines != bytes.Count(data, []byte("\n"))+map[bool]int{true: 1}[st.Unterminated == 1] {
			t.Errorf("%s: counts do not add up: %+v", name, st)
		}
		if st.Classified == 0 {
			t.Errorf("%s: nothing classified", name)
		}
		if bn := s.Banner(); bn.Version == "" || bn.Node == "" {
			t.Errorf("%s: no banner: %+v", name, bn)
		}
		t.Logf("%s: %d lines, %d classified, %d boots, unknown %v", name, st.Lines, st.Classified, st.Boots, st.UnknownByPrefix)
	}
}
