package capture

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// auditBundle is the generator's `nats audit gather` bundle (testdata/gen):
// bundle.zip is the archive natscli v0.5.0 wrote, verbatim, of a 3-server
// v2.15.2 cluster (aud-0..2, cluster audit, accounts SYS and APP); its
// want.json holds the figures the generator read from the same servers.
const auditBundle = "../testdata/bundles/audit-gather-v2.15.2"

func auditZip(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(auditBundle, "bundle.zip"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// auditEntries returns the archive's entries by name.
func auditEntries(t testing.TB, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// envelopeKinds maps the archive's artifact folders that hold answers of
// the endpoints this package reads to their kinds.
var envelopeKinds = map[string]string{
	"health": KindHealthz, "variables": KindVarz, "jetstream_info": KindJsz, "account_raftz": KindRaftz,
}

// wantOf returns the want.json server of that name.
func wantOf(t testing.TB, w wantBundle, name string) wantServer {
	t.Helper()
	i := slices.IndexFunc(w.Servers, func(s wantServer) bool { return s.Name == name })
	if i < 0 {
		t.Fatalf("server %q not in want.json", name)
	}
	return w.Servers[i]
}

// checkMetaView compares one capture's meta view with want.json. /jsz and
// /varz carry the quorum only from v2.15 on; before, it is computed.
func checkMetaView(t *testing.T, where string, c Capture, ws wantServer) {
	t.Helper()
	m, ok := c.Meta()
	if !ok || ws.Meta == nil {
		return
	}
	size := ws.Meta.ClusterSize
	if c.Raftz == nil && ws.Meta.JszClusterSize != nil {
		size = *ws.Meta.JszClusterSize
	}
	fromServer := c.Raftz != nil || strings.HasPrefix(ws.Version, "2.15.")
	if m.ClusterSize != size || m.Quorum != ws.Meta.Quorum || m.HasLeader != (ws.Meta.LeaderID != "") ||
		m.QuorumFromServer != fromServer {
		t.Errorf("%s: meta view %+v, want size %d quorum %d (from server %v) leader %q", where, m, size, ws.Meta.Quorum,
			fromServer, ws.Meta.LeaderID)
	}
}

// Every answer in the audit archive (each a natscli request envelope
// {"server":…,"data":…}, pretty-printed, one per file) decodes to one
// capture of its endpoint, naming the server that answered; and the same
// answers as `nats server request` prints them (one compact line per
// server, the form of incident000-request-jetstream.jsonl) decode to the
// same captures.
func TestAuditEnvelopes(t *testing.T) {
	w := loadWant(t, auditBundle)
	entries := auditEntries(t, auditZip(t))
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range entries {
			if !yield(n) {
				return
			}
		}
	})
	perKind := map[string][]Capture{}
	empty := 0
	lines := map[string][]byte{}
	for _, p := range names {
		kind, ok := envelopeKinds[path.Base(path.Dir(p))]
		if !ok {
			continue
		}
		caps, err := Decode(p, bytes.NewReader(entries[p]))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if len(caps) != 1 {
			t.Errorf("%s: %d captures, want 1", p, len(caps))
			continue
		}
		c := caps[0]
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(entries[p], &env); err != nil {
			t.Fatal(err)
		}
		if string(env.Data) == "{}" {
			// $G's /raftz: no group. By content alone that is no
			// endpoint's answer; the archive reader knows it from the
			// manifest (TestAuditArchive).
			if c.Kind != KindUnknown || c.Info == nil || c.Server.Name == "" {
				t.Errorf("%s: empty answer taken for %s, server %+v", p, c.Kind, c.Server)
			}
			empty++
			continue
		}
		if c.Kind != kind || c.Problem != nil || c.Info == nil {
			t.Errorf("%s: kind %s (want %s) problem %v envelope %v", p, c.Kind, kind, c.Problem, c.Info != nil)
			continue
		}
		ws := wantOf(t, w, c.Server.Name)
		if c.Server.Version != ws.Version || c.Server.Cluster != ws.Cluster || !strings.Contains(p, "/"+ws.Name+"/") && !strings.Contains(p, "__"+ws.Name+"/") {
			t.Errorf("%s: server %+v, want %s %s %s", p, c.Server, ws.Name, ws.Version, ws.Cluster)
		}
		// A /raftz answer names the answering node when it lists a group.
		if c.Raftz != nil && len(c.Raftz.Accounts()) > 0 && (c.Server.Node != ws.PeerID || c.Server.Node != natsfmt.PeerID(c.Server.Name)) {
			t.Errorf("%s: node %q, want %s = natsfmt.PeerID(%s)", p, c.Server.Node, ws.PeerID, c.Server.Name)
		}
		checkMetaView(t, p, c, ws)
		// One request: the same endpoint (and account) of every server.
		key := kind + " " + path.Dir(path.Dir(path.Dir(p)))
		perKind[key] = append(perKind[key], c)
		var compact bytes.Buffer
		if err := json.Compact(&compact, entries[p]); err != nil {
			t.Fatal(err)
		}
		lines[key] = append(append(lines[key], compact.Bytes()...), '\n')
	}
	n := 0
	for key, jl := range lines {
		want := perKind[key]
		got, err := Decode("request.jsonl", bytes.NewReader(jl))
		if err != nil {
			t.Errorf("%s as lines: %v", key, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s as lines: %d captures, want %d", key, len(got), len(want))
			continue
		}
		for i := range got {
			n++
			if got[i].Line != i+1 || got[i].Server != want[i].Server || got[i].Kind != want[i].Kind {
				t.Errorf("%s line %d: %+v, want server %+v", key, i+1, got[i], want[i].Server)
			}
			for _, d := range []string{cmp.Diff(want[i].Jsz, got[i].Jsz), cmp.Diff(want[i].Raftz, got[i].Raftz),
				cmp.Diff(want[i].Healthz, got[i].Healthz), cmp.Diff(want[i].Varz, got[i].Varz)} {
				if d != "" {
					t.Errorf("%s line %d differs from the file form: %s", key, i+1, d)
				}
			}
		}
	}
	// health, variables, jetstream_info and account_raftz of APP and SYS
	// of 3 servers; $G's account_raftz is empty on each.
	if n != 15 || empty != 3 {
		t.Errorf("%d answers compared in both forms (want 15), %d empty (want 3)", n, empty)
	}
}

// In every bundle, each server's /jsz and /raftz agree on the meta leader
// (jsz names it, raftz gives its id: the id is the name's hash), and the
// servers agree with each other as want.json says they did.
func TestCaptureAgreement(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/bundles/*")
	compared := 0
	for _, dir := range dirs {
		read, ok := bundleFiles(t, dir)
		if !ok {
			continue
		}
		w := loadWant(t, dir)
		got, want := map[string]bool{}, map[string]bool{}
		for _, ws := range w.Servers {
			if ws.Meta == nil || ws.JetStreamDisabled || ws.Captures["jsz"] == "" || ws.Captures["raftz"] == "" {
				continue
			}
			jb, ok1 := read(ws.Captures["jsz"])
			rb, ok2 := read(ws.Captures["raftz"])
			if !ok1 || !ok2 {
				t.Errorf("%s %s: captures missing", dir, ws.Name)
				continue
			}
			j, err := DecodeJsz("jsz", jb)
			if err != nil {
				t.Fatal(err)
			}
			r, err := DecodeRaftz("raftz", rb)
			if err != nil {
				t.Fatal(err)
			}
			g, _, ok := r.Meta()
			if !ok || g.ID != natsfmt.PeerID(ws.Name) {
				t.Errorf("%s %s: raftz meta id %s", dir, ws.Name, g.ID)
			}
			jm, rm := MetaFromCluster(j.Meta, ws.Name), MetaFromRaftz(g)
			if jm.Leader != rm.Leader || (jm.LeaderName != "" && jm.Leader != natsfmt.PeerID(jm.LeaderName)) {
				t.Errorf("%s %s: jsz leader %s (%s), raftz leader %s", dir, ws.Name, jm.Leader, jm.LeaderName, rm.Leader)
			}
			compared++
			got[rm.Leader] = true
			want[ws.Meta.LeaderID] = true
		}
		if !cmp.Equal(got, want) {
			t.Errorf("%s: leaders %v, want.json says %v", dir, got, want)
		}
	}
	if compared < 20 {
		t.Errorf("only %d servers compared", compared)
	}
}

func TestAuditArchive(t *testing.T) {
	b := auditZip(t)
	w := loadWant(t, auditBundle)
	a, err := ReadAuditArchive(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Problems) != 0 {
		t.Errorf("problems: %v", a.Problems)
	}
	var meta struct {
		Connected string `json:"connected_server_name"`
	}
	if err := json.Unmarshal(auditEntries(t, b)["capture/misc/audit_gather_metadata.json"], &meta); err != nil {
		t.Fatal(err)
	}
	if a.Metadata == nil || a.Metadata.ConnectedServerName != meta.Connected || a.Metadata.CaptureTime.IsZero() ||
		a.Metadata.ConnectedServerVersion != w.Servers[0].Version {
		t.Errorf("metadata %+v", a.Metadata)
	}
	if len(a.Servers) != len(w.Servers) || a.Skipped == 0 {
		t.Fatalf("%d servers (want %d), %d skipped", len(a.Servers), len(w.Servers), a.Skipped)
	}
	wantNames := []string{}
	for _, ws := range w.Servers {
		wantNames = append(wantNames, ws.Name)
	}
	sort.Strings(wantNames)
	for i, s := range a.Servers {
		ws := wantOf(t, w, s.Name)
		if s.Cluster != ws.Cluster || s.Name != wantNames[i] {
			t.Errorf("server %d: %s/%s, want %s/%s", i, s.Cluster, s.Name, ws.Cluster, wantNames[i])
		}
		kinds := map[string]int{}
		for _, c := range s.Captures {
			kinds[c.Kind]++
			if c.Server.Name != s.Name || c.Problem != nil {
				t.Errorf("%s: capture %s from %+v, problem %v", s.Name, c.File, c.Server, c.Problem)
			}
		}
		// The merged /raftz holds every group want.json lists, by account.
		wantGroups := map[string]int{}
		for _, g := range ws.Groups {
			wantGroups[g.Account]++
		}
		r := s.Raftz()
		gotGroups := map[string]int{}
		for _, acc := range r.Accounts() {
			gotGroups[acc] = len(r[acc])
		}
		if !cmp.Equal(gotGroups, wantGroups) || len(wantGroups) != 2 {
			t.Errorf("%s: merged raftz groups by account %v, want %v", s.Name, gotGroups, wantGroups)
		}
		// One /raftz answer and one account info per account ($G, APP,
		// SYS), each account info of the account its path names.
		for _, c := range s.Captures {
			if c.Kind == KindAccountz && (c.Account == nil || !strings.Contains(c.File, "/accounts/"+c.Account.AccountName+"/")) {
				t.Errorf("%s: account info %s of %+v", s.Name, c.File, c.Account)
			}
			if c.Kind == KindGatewayz && (c.Gatewayz == nil || c.Gatewayz.ServerID != c.Server.ID) || c.Kind == KindLeafz && (c.Leafz == nil || c.Leafz.Leafs == nil) {
				t.Errorf("%s: %s answer %s not decoded", s.Name, c.Kind, c.File)
			}
		}
		if kinds[KindJsz] != 1 || kinds[KindVarz] != 1 || kinds[KindHealthz] != 1 || kinds[KindRaftz] != 3 ||
			kinds[KindGatewayz] != 1 || kinds[KindLeafz] != 1 || kinds[KindAccountz] != 3 || len(kinds) != 7 {
			t.Errorf("%s: kinds %v", s.Name, kinds)
		}
	}
	golden(t, "audit-gather-v2.15.2.txt", a.Captures())
}

// rezip rewrites the archive, letting edit change or drop entries.
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
	b := auditZip(t)
	jsz := "capture/clusters/audit/aud-1/jetstream_info/0001.json"
	if _, ok := auditEntries(t, b)[jsz]; !ok {
		t.Fatalf("no %s in the archive", jsz)
	}
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
			// The other captures are all there: 3 servers × 11 (6 of their
			// own, /gatewayz, /leafz and the info of 3 accounts), less the
			// broken one.
			n := 0
			for _, s := range a.Servers {
				n += len(s.Captures)
			}
			if n != 32 {
				t.Errorf("%d captures kept, want 32", n)
			}
		})
	}
}

// TestLooseAuditEndpoints: /gatewayz, /leafz and /accountz?acc=APP as
// real servers of 2.10 to 2.15 answer them over HTTP (the audit-faults
// fixtures' loose/ folders) decode to one answer of their kind, each of
// the server that gave it: aud-0 names gateway west in its configuration
// and holds the one leafnode connection, the others learnt west.
func TestLooseAuditEndpoints(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/bundles/audit-faults-*/loose/*")
	if err != nil || len(dirs) < 12 {
		t.Fatalf("loose captures %v: %v", dirs, err)
	}
	for _, dir := range dirs {
		server := filepath.Base(dir)
		var id string
		for _, name := range []string{"varz.json", "gatewayz.json", "leafz.json", "accountz-APP.json"} {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			caps, err := Decode(name, f)
			f.Close()
			if err != nil || len(caps) != 1 {
				t.Fatalf("%s/%s: %d answers, %v", dir, name, len(caps), err)
			}
			c := caps[0]
			switch name {
			case "varz.json":
				id = c.Varz.ServerID
			case "gatewayz.json":
				g := c.Gatewayz
				if c.Kind != KindGatewayz || g == nil || g.ServerID != id {
					t.Fatalf("%s: %+v", dir, c)
				}
				west, ok := g.Outbound["west"]
				if server == "west-0" {
					west, ok = g.Outbound["audit"]
				}
				if !ok || west.IsConfigured != (server == "aud-0" || server == "west-0") {
					t.Errorf("%s: outbound gateways %+v", dir, g.Outbound)
				}
			case "leafz.json":
				l := c.Leafz
				if c.Kind != KindLeafz || l == nil || l.ServerID != id || (len(l.Leafs) == 1) != (server == "aud-0") || l.NumLeafs != len(l.Leafs) {
					t.Errorf("%s: %+v", dir, l)
				}
				if server == "aud-0" && (l.Leafs[0].Account != "APP" || !strings.HasPrefix(l.Leafs[0].Name, "leaf")) {
					t.Errorf("%s: leaf %+v", dir, l.Leafs[0])
				}
			case "accountz-APP.json":
				if c.Kind != KindAccountz || c.Account == nil || c.Account.AccountName != "APP" || c.Server.ID != id || c.Account.Claim != nil {
					t.Errorf("%s: %+v %+v", dir, c, c.Account)
				}
			}
		}
	}
}
