package analysis

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/replicas"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// TestReplicaDivergenceOneSequence: one record rewritten with a valid
// checksum on one replica (the generator's small function, here on a copy
// of the flat bundle through the same reader) is one diverging sequence
// with the servers on each side.
func TestReplicaDivergenceOneSequence(t *testing.T) {
	dir := copyTree(t, flatBundle)
	rewriteSeq40(t, dir, "store-n1")
	checkSeq40Diverges(t, dir)
}

// TestRenamedFolderStillCompared: the same rewrite, then n1's ORDERS folder
// renamed (its meta.inf still names ORDERS, so it is still a copy of ORDERS):
// no other store holds a folder of that name, so its first read sums no
// digests, and the comparison must read them before comparing.
func TestRenamedFolderStillCompared(t *testing.T) {
	dir := copyTree(t, flatBundle)
	rewriteSeq40(t, dir, "store-n1")
	streams := filepath.Join(dir, "store-n1", "$G", "streams")
	if err := os.Rename(filepath.Join(streams, "ORDERS"), filepath.Join(streams, "ORDERS-moved")); err != nil {
		t.Fatal(err)
	}
	checkSeq40Diverges(t, dir)
}

// rewriteSeq40 gives seq 40 of store's ORDERS another payload of the same
// length under a checksum recomputed with the stream's key, as a replica
// that took a different write would hold.
func rewriteSeq40(t *testing.T, dir, store string) {
	t.Helper()
	p := filepath.Join(dir, store, filepath.FromSlash(ordersBlock))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	key := "ORDERS-1"
	br, err := storeparse.NewBlockReader(p, strings.NewReader(string(b)), int64(len(b)), key)
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, err := br.Next()
		if err != nil {
			t.Fatalf("seq 40 not found: %v", err)
		}
		if r.Seq == 40 && !r.Tombstone {
			resealPayload(b, r, key)
			break
		}
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if sc, err := storeparse.ScanStream(os.DirFS(dir), store+"/$G/streams/ORDERS", storeparse.ScanOptions{}); err != nil || len(sc.Problems) > 0 {
		t.Fatalf("the rewritten record does not pass its checksum: %v %v", err, sc.Problems)
	}
}

// checkSeq40Diverges wants exactly one divergence: seq 40, n1 against n2,n3.
func checkSeq40Diverges(t *testing.T, dir string) {
	t.Helper()
	var div []report.Finding
	for _, f := range analyze(t, dir).Findings {
		if f.Code == "replica-divergence" {
			div = append(div, f)
		}
	}
	if len(div) != 1 || !reflect.DeepEqual(div[0].Ranges, []report.Range{{First: 40, Last: 40}}) ||
		!strings.Contains(div[0].Evidence[0], "content differs between n1 | n2,n3") {
		t.Fatalf("%+v", div)
	}
}

// TestStandaloneNamesakeIsNoReplica: a non-clustered server's store (no
// _js_ folder) holding a stream of the same account and name as a
// cluster's R3 stream — here the v2.10.22 cluster's ORDERS laid beside the
// v2.15.2 cluster's, as a bundle of two environments can — is a different
// stream: it is not compared with the cluster's replicas, and no
// divergence or gap is raised between them.
func TestStandaloneNamesakeIsNoReplica(t *testing.T) {
	dir := copyTree(t, bundlesDir+"/v2.15.2-flat/bundle")
	other := copyTree(t, bundlesDir+"/v2.10.22-per-server/bundle/nats-0/data/jetstream/$G/streams/ORDERS")
	dst := filepath.Join(dir, "standalone", "jetstream", "$G", "streams", "ORDERS")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, dst); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Stream == "ORDERS" && (f.Code == "replica-divergence" || f.Code == "replica-gap") {
			t.Errorf("%s across unrelated streams: %s", f.Code, f.Message)
		}
	}
	copies := 0
	for _, st := range rep.Streams {
		if st.Name == "ORDERS" {
			copies += len(st.OnDisk)
		}
	}
	if copies != 4 {
		t.Errorf("ORDERS copies reported: %d, want the 3 replicas and the standalone one", copies)
	}
}

// TestReplicaDivergenceOnModel: one diverging sequence across three copies
// is one finding naming the sequence and the servers on each side; copies
// that agree everywhere they overlap raise none.
func TestReplicaDivergenceOnModel(t *testing.T) {
	mkModel := func(diverged []model.DivergedSpan) *model.Model {
		m := &model.Model{IDs: map[string]string{}}
		st := &model.Stream{Account: "APP", Name: "ORDERS", Replicas: 3}
		for _, n := range []string{"n1", "n2", "n3"} {
			m.Servers = append(m.Servers, &model.Server{Name: n, ID: model.ServerID(n), StoreDir: n, Sources: map[string]bool{"store": true}})
			st.Copies = append(st.Copies, &model.StreamCopy{Server: model.ServerID(n), FirstSeq: 1, LastSeq: 100, Messages: 100})
		}
		st.Comparison = &model.ReplicaComparison{Copies: st.Copies, Diverged: diverged}
		m.Streams = []*model.Stream{st}
		return m
	}
	fs := runCheck(replicas.CheckReplicaDivergence, mkModel([]model.DivergedSpan{{Range: report.Range{First: 40, Last: 40}, Sides: []uint64{0b001, 0b110}}}))
	if len(fs) != 1 {
		t.Fatalf("%d findings: %s", len(fs), summarize(fs))
	}
	f := fs[0]
	if f.Stream != "ORDERS" || f.Seq != 40 || !reflect.DeepEqual(f.Ranges, []report.Range{{First: 40, Last: 40}}) || !reflect.DeepEqual(f.Servers, []string{"n1", "n2", "n3"}) {
		t.Errorf("finding %+v", f)
	}
	if !slicesContains(f.Evidence, "sequences 40: content differs between n1 | n2,n3") {
		t.Errorf("evidence %q", f.Evidence)
	}
	if fs := runCheck(replicas.CheckReplicaDivergence, mkModel(nil)); len(fs) != 0 {
		t.Errorf("copies agree, yet %s", summarize(fs))
	}
}
