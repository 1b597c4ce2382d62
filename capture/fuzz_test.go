package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// seeds adds every real capture to a fuzz corpus: the incident thread's
// files under testdata, the JSON files of the directory bundles under
// ../testdata/bundles, and the answers in the audit-gather archive.
func seeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json*")
	for _, pat := range []string{"*", "*/*", "*/*/*"} {
		more, _ := filepath.Glob("../testdata/bundles/*/bundle/" + pat + ".json")
		files = append(files, more...)
	}
	var inputs [][]byte
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	for name, b := range auditEntries(f, auditZip(f)) {
		// Only the answers this package reads (not routez, subsz, …), one
		// compact line each (as `nats server request` prints them): seeded
		// pretty-printed, they slowed FuzzDecode about 80-fold (26 against
		// 2000 execs/s here).
		if _, ok := envelopeKinds[path.Base(path.Dir(name))]; ok {
			var c bytes.Buffer
			if err := json.Compact(&c, b); err != nil {
				f.Fatal(err)
			}
			inputs = append(inputs, c.Bytes())
		}
	}
	if len(inputs) < 100 {
		f.Fatalf("only %d seed files", len(inputs))
	}
	for _, b := range inputs {
		f.Add(b)
		// Each line alone too, so that single answers get mutated.
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(l) > 0 && l[0] == '{' {
				f.Add(l)
			}
		}
	}
}

// checkErr asserts every error is a CorruptError naming the file.
func checkErr(t *testing.T, file string, err error, size int) {
	t.Helper()
	if err == nil {
		return
	}
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var ce *binfmt.CorruptError
		if !errors.As(e, &ce) {
			t.Fatalf("error %v is not a CorruptError", e)
		}
		if ce.File != file || ce.Offset < 0 || ce.Offset > int64(size)+1 {
			t.Fatalf("error %v: file %q offset %d (input %d bytes)", e, ce.File, ce.Offset, size)
		}
	}
	walk(err)
}

func FuzzDecode(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		caps, err := Decode("fuzz-raftz.json", bytes.NewReader(b))
		checkErr(t, "fuzz-raftz.json", err, len(b))
		for _, c := range caps {
			if c.Offset < 0 || c.Offset >= int64(len(b)) || c.Line < 1 {
				t.Fatalf("capture at offset %d line %d of %d bytes", c.Offset, c.Line, len(b))
			}
			n := 0
			for _, p := range []bool{c.Jsz != nil, c.Raftz != nil, c.Healthz != nil, c.Varz != nil} {
				if p {
					n++
				}
			}
			if n > 1 || (n == 0) != (c.Kind == KindUnknown) {
				t.Fatalf("kind %s with %d payloads", c.Kind, n)
			}
			c.Meta()
		}
		_ = WriteSummary(&bytes.Buffer{}, caps)
	})
}

func fuzzEndpoint(f *testing.F, decode func(file string, b []byte) error) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		err := decode("ep.json", b)
		checkErr(t, "ep.json", err, len(b))
	})
}

func FuzzDecodeJsz(f *testing.F) {
	fuzzEndpoint(f, func(file string, b []byte) error {
		j, err := DecodeJsz(file, b)
		if j != nil && j.Meta != nil {
			MetaFromCluster(j.Meta, "x")
		}
		return err
	})
}

func FuzzDecodeRaftz(f *testing.F) {
	fuzzEndpoint(f, func(file string, b []byte) error {
		r, err := DecodeRaftz(file, b)
		if g, _, ok := r.Meta(); ok {
			MetaFromRaftz(g)
		}
		return err
	})
}

func FuzzDecodeHealthz(f *testing.F) {
	fuzzEndpoint(f, func(file string, b []byte) error {
		_, err := DecodeHealthz(file, b)
		return err
	})
}

func FuzzDecodeVarz(f *testing.F) {
	fuzzEndpoint(f, func(file string, b []byte) error {
		_, err := DecodeVarz(file, b)
		return err
	})
}

func FuzzReadAuditArchive(f *testing.F) {
	f.Add(auditZip(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadAuditArchive(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			var ce *binfmt.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			return
		}
		for _, p := range a.Problems {
			var ce *binfmt.CorruptError
			if !errors.As(p, &ce) || !strings.HasPrefix(ce.File, "capture/") {
				t.Fatalf("problem %v", p)
			}
		}
		_ = a.Captures()
	})
}

func TestEndpointReaders(t *testing.T) {
	jl := readFixture(t, "incident000-request-jetstream.jsonl")
	line1 := jl[:bytes.IndexByte(jl, '\n')]
	j, err := DecodeJsz("a.json", line1)
	if err != nil || j == nil || j.Meta.ClusterSize != 10 {
		t.Fatalf("DecodeJsz: %v %+v", err, j)
	}
	r, err := DecodeRaftz("b.json", readFixture(t, "incident000-raftz-meta.json"))
	if err != nil || len(r["$SYS"]["_meta_"].Peers) != 9 {
		t.Fatalf("DecodeRaftz: %v", err)
	}
	// Wrong endpoint, trailing data, two values: errors with offsets.
	if _, err := DecodeHealthz("c.json", line1); err == nil || !strings.Contains(err.Error(), "not a /healthz answer") {
		t.Errorf("healthz of a jsz: %v", err)
	}
	if _, err := DecodeJsz("d.json", jl); err == nil || !strings.Contains(err.Error(), "data after") {
		t.Errorf("two lines: %v", err)
	} else if ce := new(binfmt.CorruptError); !errors.As(err, &ce) || ce.Offset != int64(len(line1)+1) {
		t.Errorf("two lines offset: %v", err)
	}
	if _, err := DecodeJsz("e.json", line1[:100]); !errors.Is(err, binfmt.ErrTruncated) {
		t.Errorf("cut: %v", err)
	}
	// An empty /raftz answer (no groups) is still a /raftz answer.
	if r, err := DecodeRaftz("f.json", []byte(" {}\n")); err != nil || r == nil {
		t.Errorf("empty raftz: %v", err)
	}
}
