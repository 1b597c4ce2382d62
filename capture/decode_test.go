package capture

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeFixture(t *testing.T, name string) []Capture {
	t.Helper()
	caps, err := Decode(name, bytes.NewReader(readFixture(t, name)))
	if err != nil {
		t.Fatalf("Decode(%s): %v", name, err)
	}
	return caps
}

func golden(t *testing.T, name string, caps []Capture) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSummary(&buf, caps); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if d := cmp.Diff(string(want), buf.String()); d != "" {
		t.Errorf("%s differs from golden (-want +got):\n%s", name, d)
	}
}

func TestIncident000Jsz(t *testing.T) {
	caps := decodeFixture(t, "incident000-request-jetstream.jsonl")
	if len(caps) != 5 {
		t.Fatalf("got %d captures, want 5", len(caps))
	}
	names := map[string]bool{}
	for i, c := range caps {
		if c.Kind != KindJsz || c.Jsz == nil {
			t.Fatalf("capture %d: kind %q", i, c.Kind)
		}
		if c.Line != i+1 {
			t.Errorf("capture %d: line %d", i, c.Line)
		}
		if c.Server.Version != "2.10.22" || c.Server.Cluster != "xxxxxxxxxxxxxxx_nats" || c.Server.ID != c.Jsz.ServerID {
			t.Errorf("capture %d: server %+v", i, c.Server)
		}
		names[c.Server.Name] = true
		m := c.Jsz.Meta
		if m == nil || m.ClusterSize != 10 || m.Peer != natsfmt.NoLeaderPeer || m.HasLeader() || m.LeaderPeer() != "" {
			t.Errorf("capture %d: meta %+v", i, m)
		}
		v, ok := c.Meta()
		if !ok || v.ClusterSize != 10 || v.Quorum != 6 || v.QuorumFromServer || v.HasLeader || len(v.Peers) != 0 {
			t.Errorf("capture %d: meta view %+v", i, v)
		}
	}
	if len(names) != 5 {
		t.Errorf("servers %v, want 5 distinct", names)
	}
	if caps[0].Jsz.Messages != 484777 || caps[0].Jsz.Config.StoreDir != "/data/jetstream" {
		t.Errorf("nats-0 figures: %+v", caps[0].Jsz)
	}
	// The line offsets are where each line starts.
	raw := readFixture(t, "incident000-request-jetstream.jsonl")
	for _, c := range caps {
		if c.Offset != 0 && raw[c.Offset-1] != '\n' {
			t.Errorf("offset %d is not a line start", c.Offset)
		}
	}
	golden(t, "incident000-request-jetstream.txt", caps)
}

func TestIncident000Raftz(t *testing.T) {
	caps := decodeFixture(t, "incident000-raftz-meta.json")
	if len(caps) != 1 || caps[0].Kind != KindRaftz {
		t.Fatalf("captures: %+v", caps)
	}
	c := caps[0]
	g, acc, ok := c.Raftz.Meta()
	if !ok || acc != "$SYS" {
		t.Fatalf("no _meta_ group")
	}
	if g.Size != 10 || g.QuorumNeeded != 6 || g.Term != 1191202101440508490 || g.Leader != "" || g.EverHadLeader || g.VotedFor != "HuYMtjaW" {
		t.Errorf("group: %+v", g)
	}
	if c.Server.Node != "S1Nunr6R" || c.Server.Node != natsfmt.PeerID("nats-0") {
		t.Errorf("node %q", c.Server.Node)
	}
	for _, id := range []string{`"kCGheKT`, `yrzKKR@u`, "cnr4t3eg", "bkCGheKT"} {
		if _, ok := g.Peers[id]; !ok {
			t.Errorf("peer %q missing", id)
		}
	}
	v, _ := c.Meta()
	if len(v.Peers) != 10 || v.ClusterSize != 10 || v.Quorum != 6 || v.HasLeader {
		t.Errorf("view: %+v", v)
	}
	var self, named, seen int
	for _, p := range v.Peers {
		if p.Self {
			self++
		}
		if p.Name != "" {
			named++
			if natsfmt.PeerID(p.Name) != p.ID {
				t.Errorf("peer %s named %s hashes to %s", p.ID, p.Name, natsfmt.PeerID(p.Name))
			}
		}
		if p.Seen {
			seen++
		}
		if p.ID == "HuYMtjaW" && p.LastSeen.String() != "1.640344676s" {
			t.Errorf("last_seen %v", p.LastSeen)
		}
	}
	if self != 1 || named != 4 || seen != 4 {
		t.Errorf("self %d named %d seen %d", self, named, seen)
	}
	golden(t, "incident000-raftz-meta.txt", caps)
}

// The same answers in every file form give the same captures.
func TestForms(t *testing.T) {
	jl := readFixture(t, "incident000-request-jetstream.jsonl")
	pretty := readFixture(t, "incident000-raftz-meta.json")
	lines := bytes.Split(bytes.TrimSpace(jl), []byte("\n"))
	want := append(decodeFixture(t, "incident000-request-jetstream.jsonl"), decodeFixture(t, "incident000-raftz-meta.json")...)

	forms := map[string][]byte{
		"array":        append(append([]byte("[\n"), bytes.Join(append(lines, pretty), []byte(",\n"))...), "\n]\n"...),
		"concatenated": append(append(append([]byte{}, jl...), pretty...), pretty...)[:len(jl)+len(pretty)],
		"crlf":         bytes.ReplaceAll(append(append([]byte{}, jl...), pretty...), []byte("\n"), []byte("\r\n")),
		"bom":          append([]byte("\xEF\xBB\xBF"), append(append([]byte{}, jl...), pretty...)...),
		"no-newline":   append(bytes.Join(lines, nil), pretty...),
	}
	for name, b := range forms {
		t.Run(name, func(t *testing.T) {
			got, err := Decode(name, bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d captures, want %d", len(got), len(want))
			}
			for i := range got {
				if d := cmp.Diff(want[i].Jsz, got[i].Jsz); d != "" {
					t.Errorf("capture %d jsz: %s", i, d)
				}
				if d := cmp.Diff(want[i].Raftz, got[i].Raftz); d != "" {
					t.Errorf("capture %d raftz: %s", i, d)
				}
				if got[i].Server != want[i].Server {
					t.Errorf("capture %d server %+v", i, got[i].Server)
				}
				if b[got[i].Offset] != '{' {
					t.Errorf("capture %d offset %d points at %q", i, got[i].Offset, b[got[i].Offset])
				}
			}
		})
	}
}

func asCorrupt(t *testing.T, err error) []*binfmt.CorruptError {
	t.Helper()
	var out []*binfmt.CorruptError
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
			t.Errorf("error %v is not a CorruptError", e)
			return
		}
		out = append(out, ce)
	}
	if err != nil {
		walk(err)
	}
	return out
}

// Broken copies of the real files: each keeps what precedes the damage and
// reports file and offset.
func TestBroken(t *testing.T) {
	jl := readFixture(t, "incident000-request-jetstream.jsonl")
	pretty := readFixture(t, "incident000-raftz-meta.json")
	lineStart := func(n int) int { // offset of line n (1-based) of jl
		off := 0
		for i := 1; i < n; i++ {
			off += bytes.IndexByte(jl[off:], '\n') + 1
		}
		return off
	}
	cases := []struct {
		name     string
		in       []byte
		caps     int
		sentinel error
		offset   int64
		msg      string
	}{
		{"cut-in-line-3", jl[:lineStart(3)+200], 2, binfmt.ErrTruncated, int64(lineStart(3)), "line 3"},
		{"cut-pretty", pretty[:len(pretty)/2], 0, binfmt.ErrTruncated, 0, "line 1"},
		{"cut-after-pretty-brace", append(append([]byte{}, pretty...), pretty[:40]...), 1, binfmt.ErrTruncated, int64(len(pretty)), "line 73"},
		{"garbage-line-2", func() []byte {
			b := append([]byte{}, jl...)
			copy(b[lineStart(2)+10:], "\x00\xff\x13garbage")
			return b
		}(), 4, binfmt.ErrFormat, int64(lineStart(2) + 10), "line 2"},
		{"text-before", append([]byte("nats: request sent\n"), jl...), 5, binfmt.ErrFormat, 1, "line 1"},
		{"huge-number", bytes.Replace(jl, []byte(`"cluster_size":10`), []byte(`"cluster_size":1e999999`), 1), 5, binfmt.ErrFormat, int64(bytes.Index(jl, []byte(`"cluster_size":10`)) + len(`"cluster_size":1e999999`)), "cluster_size"},
		{"negative-term", bytes.Replace(pretty, []byte(`"term": 1191202101440508490`), []byte(`"term": -1`), 1), 1, binfmt.ErrFormat, -1, "term"},
		{"bad-time", bytes.Replace(jl, []byte(`"now":"2025-01-24T10:18:45.329216868Z"`), []byte(`"now":"yesterday"`), 1), 5, binfmt.ErrFormat, -1, "line 1"},
		{"deep-nesting", append(append([]byte{}, jl...), strings.Repeat("[", 20000)...), 5, binfmt.ErrFormat, int64(len(jl) + 10000), "depth"},
		{"binary", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0, binfmt.ErrFormat, 0, "line 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caps, err := Decode("f.json", bytes.NewReader(tc.in))
			if len(caps) != tc.caps {
				t.Errorf("%d captures, want %d", len(caps), tc.caps)
			}
			ces := asCorrupt(t, err)
			if len(ces) == 0 {
				t.Fatalf("no error")
			}
			ce := ces[0]
			if !errors.Is(ce, tc.sentinel) || ce.File != "f.json" || (tc.offset >= 0 && ce.Offset != tc.offset) || !strings.Contains(ce.Error(), tc.msg) {
				t.Errorf("error %v (offset %d), want %v at %d mentioning %q", ce, ce.Offset, tc.sentinel, tc.offset, tc.msg)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	jl := readFixture(t, "incident000-request-jetstream.jsonl")
	caps, err := decodeStream("big.json", "", bytes.NewReader(jl), int64(len(jl)/2))
	if len(caps) == 0 || len(caps) >= 5 {
		t.Errorf("%d captures", len(caps))
	}
	ces := asCorrupt(t, err)
	if len(ces) != 1 || !errors.Is(ces[0], binfmt.ErrTooLarge) || ces[0].Offset != int64(len(jl)/2) {
		t.Errorf("error %v", err)
	}
}
