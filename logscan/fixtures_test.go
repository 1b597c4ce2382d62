package logscan

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
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

// natscliLog is the log `nats audit gather` writes into its archive: the
// tool's own progress lines, not a server's.
const natscliLog = "capture/misc/audit_gather_log.log"

// Every log in the generator's fixture bundles: every line is counted, no
// line that holds a catalogue key phrase goes unclassified, and each server
// log has a banner with a version and a node id (natscli's own log in the
// audit archive has neither, and nothing in it may classify).
func TestFixtureBundleLogs(t *testing.T) {
	logs := fixtureLogs(t)
	if len(logs) < 30 {
		t.Fatalf("only %d logs under ../testdata/bundles", len(logs))
	}
	natscli := 0
	for name, raw := range logs {
		if strings.HasSuffix(name, "!"+natscliLog) {
			natscli++
			s := NewScanner(bytes.NewReader(raw), Options{File: name})
			for s.Next() {
			}
			if st := s.Stats(); st.Classified != 0 || st.Lines < 10 || s.Banner().Version != "" || s.Err() != nil {
				t.Errorf("%s: natscli's log: %+v, banner %+v, err %v", name, st, s.Banner(), s.Err())
			}
			continue
		}
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
	archives, _ := filepath.Glob("../testdata/bundles/audit-*/bundle.zip")
	if natscli != len(archives) || natscli == 0 {
		t.Errorf("%d natscli logs read, want one per audit archive (%d)", natscli, len(archives))
	}
}

// serverLog is a server's log file in a bundle, with what want.json says of
// that server.
type serverLog struct {
	bundle, path      string // path as want.json gives it (inside bundle/ or the archive)
	server, node, ver string
	data              []byte
}

// bundleFile reads a file of a committed bundle by the path want.json gives:
// under bundle/, else inside bundle.zip.
func bundleFile(t testing.TB, bundle, p string) []byte {
	t.Helper()
	dir := filepath.Join("..", "testdata", "bundles", bundle)
	if b, err := os.ReadFile(filepath.Join(dir, "bundle", filepath.FromSlash(p))); err == nil {
		return b
	}
	zr, err := zip.OpenReader(filepath.Join(dir, "bundle.zip"))
	if err != nil {
		t.Fatalf("%s: no %s: %v", bundle, p, err)
	}
	defer zr.Close()
	f, err := zr.Open(p)
	if err != nil {
		t.Fatalf("%s: %v", bundle, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serverLogs returns every server log the bundles' want.json files name.
func serverLogs(t testing.TB) []serverLog {
	t.Helper()
	wants, _ := filepath.Glob(filepath.Join("..", "testdata", "bundles", "*", "want.json"))
	var out []serverLog
	for _, wf := range wants {
		var w struct {
			Servers []struct {
				Name    string `json:"name"`
				Version string `json:"version"`
				PeerID  string `json:"peer_id"`
				Log     string `json:"log"`
			} `json:"servers"`
		}
		b, err := os.ReadFile(wf)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatalf("%s: %v", wf, err)
		}
		bundle := filepath.Base(filepath.Dir(wf))
		for _, s := range w.Servers {
			if s.Log == "" {
				continue
			}
			out = append(out, serverLog{bundle: bundle, path: s.Log, server: s.Name, node: s.PeerID, ver: s.Version,
				data: bundleFile(t, bundle, s.Log)})
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d server logs in the bundles", len(out))
	}
	return out
}
