package capture

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// testdata/real/v2.15.2-scratch holds what a real 3-server v2.15.2 cluster
// (s1..s3, cluster C1, accounts SYS and APP, stream ORDERS R3 and LOCAL R1,
// consumer PROC) answered: HTTP /jsz /raftz /healthz /varz per server
// (sN-*.json) and natscli v0.5.0 `nats server request …` (req-*.jsonl).
// testdata/audit-gather-v2.15.2.zip is `nats audit gather` of that cluster.
const scratch = "testdata/real/v2.15.2-scratch"

func TestRealScratchFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(scratch, "*"))
	if len(files) < 20 {
		t.Fatalf("only %d files", len(files))
	}
	want := map[string]string{"jsz": KindJsz, "raftz": KindRaftz, "raft": KindRaftz, "healthz": KindHealthz,
		"health": KindHealthz, "varz": KindVarz, "jetstream": KindJsz}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		caps, err := Decode(filepath.Base(p), bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		n := 1
		if strings.HasPrefix(filepath.Base(p), "req-") {
			n = 3
		}
		if len(caps) != n {
			t.Errorf("%s: %d captures, want %d", p, len(caps), n)
		}
		kind := ""
		for k, v := range want {
			if strings.Contains(strings.SplitN(strings.TrimPrefix(filepath.Base(p), "req-"), ".", 2)[0], k) {
				kind = v
			}
		}
		for _, c := range caps {
			if c.Kind != kind || c.Problem != nil {
				t.Errorf("%s: kind %s (want %s) problem %v", p, c.Kind, kind, c.Problem)
			}
			if c.Info != nil && (c.Server.Version != "2.15.2" || c.Server.Cluster != "C1" || !strings.HasPrefix(c.Server.Name, "s")) {
				t.Errorf("%s: server %+v", p, c.Server)
			}
			if c.Raftz != nil && c.Server.Node == "" {
				t.Errorf("%s: no node id", p)
			}
			if c.Raftz != nil && c.Info != nil && c.Server.Node != PeerID(c.Server.Name) {
				t.Errorf("%s: node %s is not PeerID(%s)", p, c.Server.Node, c.Server.Name)
			}
			if m, ok := c.Meta(); ok && (m.ClusterSize != 3 || m.Quorum != 2 || !m.HasLeader || !m.QuorumFromServer) {
				t.Errorf("%s: meta %+v", p, m)
			}
		}
	}
}

// Every server's /jsz agrees on the R3 stream, and the meta views agree with
// each other and with /raftz.
func TestRealScratchAgreement(t *testing.T) {
	var leaders = map[string]bool{}
	for _, s := range []string{"s1", "s2", "s3"} {
		j, err := DecodeJsz("jsz", readFixture(t, "real/v2.15.2-scratch/"+s+"-jsz.json"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRaftz("raftz", readFixture(t, "real/v2.15.2-scratch/"+s+"-raftz.json"))
		if err != nil {
			t.Fatal(err)
		}
		g, acc, ok := r.Meta()
		if !ok || acc != "SYS" || g.ID != PeerID(s) {
			t.Errorf("%s: raftz meta in %q id %s", s, acc, g.ID)
		}
		jm, rm := MetaFromCluster(j.Meta, s), MetaFromRaftz(g)
		if jm.Leader != rm.Leader || jm.Leader != PeerID(jm.LeaderName) || len(rm.Peers) != 3 {
			t.Errorf("%s: jsz leader %s (%s), raftz leader %s, %d peers", s, jm.Leader, jm.LeaderName, rm.Leader, len(rm.Peers))
		}
		leaders[jm.Leader] = true
		var found bool
		for _, a := range j.AccountDetails {
			for _, sd := range a.Streams {
				if sd.Name != "ORDERS" {
					continue
				}
				found = true
				st := sd.State
				if a.Name != "APP" || st.Messages != 19 || st.FirstSeq != 1 || st.LastSeq != 20 || st.NumDeleted != 1 ||
					sd.Config.Replicas != 3 || !strings.HasPrefix(sd.RaftGroup, "S-R3F-") || len(sd.Consumers) != 1 {
					t.Errorf("%s: ORDERS %+v", s, sd)
				}
				c := sd.Consumers[0]
				if c.Name != "PROC" || c.Delivered.Stream != 6 || c.AckFloor.Stream != 4 || c.NumAckPending != 2 {
					t.Errorf("%s: PROC %+v", s, c)
				}
			}
		}
		if !found {
			t.Errorf("%s: no ORDERS", s)
		}
	}
	if len(leaders) != 1 {
		t.Errorf("leaders %v", leaders)
	}
}

func TestAuditArchive(t *testing.T) {
	b := readFixture(t, "audit-gather-v2.15.2.zip")
	a, err := ReadAuditArchive(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Problems) != 0 {
		t.Errorf("problems: %v", a.Problems)
	}
	if a.Metadata == nil || a.Metadata.ConnectedServerName != "s1" || a.Metadata.CaptureTime.IsZero() {
		t.Errorf("metadata %+v", a.Metadata)
	}
	if len(a.Servers) != 3 || a.Skipped == 0 {
		t.Fatalf("%d servers, %d skipped", len(a.Servers), a.Skipped)
	}
	for i, s := range a.Servers {
		if s.Cluster != "C1" || s.Name != []string{"s1", "s2", "s3"}[i] {
			t.Errorf("server %d: %s/%s", i, s.Cluster, s.Name)
		}
		kinds := map[string]int{}
		for _, c := range s.Captures {
			kinds[c.Kind]++
			if c.Server.Name != s.Name || c.Problem != nil {
				t.Errorf("%s: capture %s from %+v, problem %v", s.Name, c.File, c.Server, c.Problem)
			}
		}
		if r := s.Raftz(); len(r) != 2 || len(r["APP"]) != 2 || len(r["SYS"]) != 1 {
			t.Errorf("%s: merged raftz accounts %v", s.Name, r.Accounts())
		}
		if kinds[KindJsz] != 1 || kinds[KindVarz] != 1 || kinds[KindHealthz] != 1 || kinds[KindRaftz] != 3 || len(kinds) != 4 {
			t.Errorf("%s: kinds %v", s.Name, kinds)
		}
	}
	golden(t, "audit-gather-v2.15.2.txt", a.Captures())
}

// rezip rewrites the fixture archive, letting edit change or drop entries.
func rezip(t *testing.T, b []byte, edit func(name string, data []byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		data := edit(f.Name, buf.Bytes())
		if data == nil {
			continue
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	return out.Bytes()
}

func TestAuditArchiveBroken(t *testing.T) {
	b := readFixture(t, "audit-gather-v2.15.2.zip")
	jsz := "capture/clusters/C1/s2/jetstream_info/0001.json"
	cases := []struct {
		name     string
		in       []byte
		fatal    bool
		sentinel error
		file     string
	}{
		{"cut-off", b[:len(b)-100], true, binfmt.ErrFormat, ""},
		{"no-manifest", rezip(t, b, func(n string, d []byte) []byte {
			if n == AuditManifest {
				return nil
			}
			return d
		}), true, binfmt.ErrFormat, ""},
		{"entry-missing", rezip(t, b, func(n string, d []byte) []byte {
			if n == jsz {
				return nil
			}
			return d
		}), false, binfmt.ErrTruncated, jsz},
		{"entry-cut", rezip(t, b, func(n string, d []byte) []byte {
			if n == jsz {
				return d[:len(d)/2]
			}
			return d
		}), false, binfmt.ErrTruncated, jsz},
		{"crc-flip", func() []byte {
			// Flip a byte inside the stored (deflated) data of an entry.
			zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			for _, f := range zr.File {
				if f.Name == jsz {
					off, _ := f.DataOffset()
					c := append([]byte{}, b...)
					c[off+int64(f.CompressedSize64)/2] ^= 0x01
					return c
				}
			}
			return nil
		}(), false, nil, jsz},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ReadAuditArchive(bytes.NewReader(tc.in), int64(len(tc.in)))
			if tc.fatal {
				if !errors.Is(err, tc.sentinel) {
					t.Errorf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Servers) != 3 {
				t.Errorf("%d servers", len(a.Servers))
			}
			if len(a.Problems) == 0 {
				t.Fatal("no problem reported")
			}
			var ce *binfmt.CorruptError
			if !errors.As(a.Problems[0], &ce) || ce.File != tc.file || (tc.sentinel != nil && !errors.Is(ce, tc.sentinel)) {
				t.Errorf("problem %v", a.Problems[0])
			}
			// The other servers' captures are all there.
			n := 0
			for _, s := range a.Servers {
				n += len(s.Captures)
			}
			if n < 11 {
				t.Errorf("%d captures kept", n)
			}
		})
	}
}
