package analysis

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/peers"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// findingsOn returns the findings with code on file.
func findingsOn(rep *report.Report, code, file string) []report.Finding {
	var out []report.Finding
	for _, f := range rep.Findings {
		if f.Code == code && f.File == file {
			out = append(out, f)
		}
	}
	return out
}

func onDisk(t *testing.T, rep *report.Report, stream, server string) report.OnDisk {
	t.Helper()
	for _, st := range rep.Streams {
		for _, d := range st.OnDisk {
			if st.Name == stream && d.Server == server {
				return d
			}
		}
	}
	t.Fatalf("no copy of %s on %s", stream, server)
	return report.OnDisk{}
}

// warnedBefore checks that remedy says what it would destroy and how to
// save it before the destructive step.
func warnedBefore(t *testing.T, remedy, destructive string, warnings ...string) {
	t.Helper()
	at := strings.Index(remedy, destructive)
	if at < 0 {
		t.Errorf("remedy lacks %q: %s", destructive, remedy)
		return
	}
	for _, w := range warnings {
		if i := strings.Index(remedy, w); i < 0 || i > at {
			t.Errorf("remedy does not say %q before %q: %s", w, destructive, remedy)
		}
	}
}

// TestPayloadBitFlipIsOneRecord flips a payload bit of seq 2 (offset 58)
// in the middle of EVENTS' one block (40 records, index.db current): one
// finding naming the file, offset and sequence; the copy's figures are what
// the block holds (all but seq 2); no index-mismatch, since index.db agrees;
// and the server's behaviour on a rebuild is evidence, not the figures.
func TestPayloadBitFlipIsOneRecord(t *testing.T) {
	healthy, err := Run(corruptBundle, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := onDisk(t, healthy, "EVENTS", "n1")
	dir := copyTree(t, corruptBundle)
	rewrite(t, filepath.Join(dir, filepath.FromSlash(eventsBlock)), flipBit(58+22+15+5, 3))
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingsOn(rep, "store-corrupt", eventsBlock)
	if len(got) != 1 {
		t.Fatalf("one damage, %d findings: %s", len(got), summarize(got))
	}
	f := got[0]
	if f.Kind != "checksum" || f.Seq != 2 || f.Offset == nil || *f.Offset != 58 || len(f.Ranges) != 1 || f.Ranges[0] != (report.Range{First: 2, Last: 2}) {
		t.Errorf("finding %s", summarize(got))
	}
	if mm := findingsOn(rep, "index-mismatch", eventsDir+"/msgs/index.db"); len(mm) != 0 {
		t.Errorf("index.db agrees with the blocks, yet %s", summarize(mm))
	}
	after := onDisk(t, rep, "EVENTS", "n1")
	if after.LastSeq != before.LastSeq || after.FirstSeq != before.FirstSeq || after.Messages != before.Messages-1 || after.Deleted != before.Deleted ||
		len(after.Unreadable) != 1 || after.Unreadable[0] != (report.Range{First: 2, Last: 2}) {
		t.Errorf("copy %+v, want the healthy %+v less seq 2", after, before)
	}
	ev := strings.Join(f.Evidence, "\n")
	if !strings.Contains(ev, "serves every message but seq 2") || !strings.Contains(ev, "truncates "+eventsBlock+" at offset 58") || !strings.Contains(ev, "sequences 2-40 go, the bad record and 38 intact messages") {
		t.Errorf("evidence does not say what the server does next: %s", ev)
	}
	if strings.Contains(f.Remedy, "remove index.db") || strings.Contains(f.Remedy, "remove "+eventsDir) {
		t.Errorf("remedy advises removing an index.db that agrees with the blocks: %s", f.Remedy)
	}
	warnedBefore(t, f.Remedy, "republish", "Keep "+eventsDir+"/msgs/index.db", "copy "+eventsBlock, "dump blk FILE --json")
}

// TestFramingLossIsOneFinding: a record length bit flip loses the framing
// at offset 116; the error and the sequences it costs are one finding.
func TestFramingLossIsOneFinding(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	rewrite(t, filepath.Join(dir, filepath.FromSlash(eventsBlock)), flipBit(116+2, 4))
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingsOn(rep, "store-corrupt", eventsBlock)
	if len(got) != 1 || got[0].Kind != "unparsable" || *got[0].Offset != 116 || len(got[0].Ranges) != 1 || got[0].Ranges[0] != (report.Range{First: 4, Last: 40}) {
		// seq 3 was deleted before the damage (index.db records it).
		t.Fatalf("want one unparsable finding at 116 costing 4-40: %s", summarize(got))
	}
	for _, mm := range findingsOn(rep, "index-mismatch", eventsDir+"/msgs/index.db") {
		if strings.Contains(mm.Remedy, "remove "+eventsDir) && !strings.Contains(mm.Remedy, "do not remove") {
			t.Errorf("index.db is the record of what the damaged block held, yet: %s", mm.Remedy)
		}
	}
}

// TestEmptiedBlockFinding empties EVENTS' block (0 bytes): a finding on the
// block naming the sequences index.db says it held, and no remedy that
// removes index.db, which would make the loss final.
func TestEmptiedBlockFinding(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	rewrite(t, filepath.Join(dir, filepath.FromSlash(eventsBlock)), truncateAt(0))
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingsOn(rep, "store-corrupt", eventsBlock)
	if len(got) != 1 || got[0].Kind != "truncated" || len(got[0].Ranges) != 1 || got[0].Ranges[0].Last != 40 || !strings.Contains(got[0].Message, "index.db says it held") {
		t.Fatalf("want one finding on the emptied block naming what it held: %s", summarize(rep.Findings))
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Remedy, "remove "+eventsDir+"/msgs/index.db") {
			t.Errorf("%s advises removing index.db, the only record of the lost block: %s", f.Code, f.Remedy)
		}
	}
}

// TestMissingMetaRemedy removes EVENTS' meta.inf: the remedy is about the
// meta files, not the block remedy.
func TestMissingMetaRemedy(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	inf := eventsDir + "/meta.inf"
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(inf))); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingsOn(rep, "store-corrupt", inf)
	if len(got) != 1 || got[0].Kind != "missing" {
		t.Fatalf("want one missing meta.inf: %s", summarize(rep.Findings))
	}
	if r := got[0].Remedy; strings.Contains(r, "bad record") || !strings.Contains(r, "meta.inf is missing") || !strings.Contains(r, "do not delete or recreate the stream") {
		t.Errorf("remedy does not fit a missing meta.inf: %s", r)
	}
}

// TestMetaFileBlamed breaks ORDERS (R3) on n1: one bit of a letter of a
// string field of meta.inf (the fixtures' streams carry no description, so
// "discard":"old" becomes "nld"), meta.sum untouched; then one bit of
// meta.sum. meta.inf is held against the stream config in n1's meta state
// and the other replicas' meta.inf: the finding names the file that
// changed, the field and the bit.
func TestMetaFileBlamed(t *testing.T) {
	dir := "store-n1/$G/streams/ORDERS"
	for _, tc := range []struct {
		name, file string
		corrupt    func([]byte) []byte
		want       []string
		offset     func([]byte) int64
	}{
		{name: "meta.inf", file: dir + "/meta.inf",
			corrupt: func(b []byte) []byte { b[bytes.Index(b, []byte(`"old"`))+1] ^= 1; return b },
			want:    []string{`field "discard"`, "bit 0", "meta state"},
			offset:  func(b []byte) int64 { return int64(bytes.Index(b, []byte(`"old"`)) + 1) }},
		{name: "meta.inf name", file: dir + "/meta.inf",
			corrupt: func(b []byte) []byte { b[bytes.Index(b, []byte(`"ORDERS"`))+3] ^= 4; return b },
			want:    []string{`field "name"`, "bit 2", "meta state"},
			offset:  func(b []byte) int64 { return int64(bytes.Index(b, []byte(`"ORDERS"`)) + 3) }},
		// Found by FuzzDamagedBundle's damages: "num_replicas" became
		// "num_replica{", which the field comparison skipped, so meta.sum
		// was blamed (fixed in blame by h11 at the same time).
		{name: "meta.inf key", file: dir + "/meta.inf",
			corrupt: func(b []byte) []byte { b[bytes.Index(b, []byte(`"num_replicas"`))+12] ^= 8; return b },
			want:    []string{`field "num_replica{"`, `names "num_replicas"`, "bit 3", "meta state"},
			offset:  func(b []byte) int64 { return int64(bytes.Index(b, []byte(`"num_replicas"`)) + 12) }},
		{name: "meta.sum", file: dir + "/meta.sum",
			corrupt: flipBit(3, 1),
			want:    []string{"changed, not meta.inf", "byte 3 differs by one bit, bit 1"},
			offset:  func([]byte) int64 { return 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundle := copyTree(t, corruptBundle)
			p := filepath.Join(bundle, filepath.FromSlash(tc.file))
			orig, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rewrite(t, p, tc.corrupt)
			rep, err := Run(bundle, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := findingsOn(rep, "store-corrupt", tc.file)
			if len(got) != 1 {
				t.Fatalf("want one finding on %s: %s", tc.file, summarize(rep.Findings))
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("message lacks %q: %s", w, got[0].Message)
				}
			}
			if want := tc.offset(orig); got[0].Offset == nil || *got[0].Offset != want {
				t.Errorf("offset %v, want %d", got[0].Offset, want)
			}
			if strings.Contains(got[0].Remedy, "recreate the stream") && !strings.Contains(got[0].Remedy, "do not delete or recreate") {
				t.Errorf("remedy would remove the intact blocks: %s", got[0].Remedy)
			}
			for _, st := range rep.Streams {
				if strings.HasPrefix(st.Name, "OR") && st.Name != "ORDERS" {
					t.Errorf("the changed name made a stream of its own: %s", st.Name)
				}
			}
			// The blocks are intact: no other damage is reported.
			for _, f := range rep.Findings {
				if f.Code == "store-corrupt" && f.File != tc.file && strings.Contains(f.File, "ORDERS") {
					t.Errorf("intact file reported: %s", summarize([]report.Finding{f}))
				}
			}
		})
	}
}

// TestDestructiveRemediesWarnFirst: every remedy that removes, rebuilds,
// truncates or peer-removes says what it destroys and how to save it before
// the destructive step. On real state: a bad record in ORDERS (R3) on n1,
// index.db from an older state than EVENTS' cut block, and the group
// remedies on the model of the same bundle.
func TestDestructiveRemediesWarnFirst(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	orders := "store-n1/$G/streams/ORDERS/msgs/1.blk"
	rewrite(t, filepath.Join(dir, filepath.FromSlash(orders)), func(b []byte) []byte { b[40] ^= 0x10; return b })
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingsOn(rep, "store-corrupt", orders)
	if len(got) != 1 {
		t.Fatalf("want one finding on %s: %s", orders, summarize(rep.Findings))
	}
	warnedBefore(t, got[0].Remedy, "nats stream cluster peer-remove ORDERS n1", "copy "+orders, "dump blk FILE --json", "deletes this replica's copy")

	dir = copyTree(t, corruptBundle)
	rewrite(t, filepath.Join(dir, filepath.FromSlash(eventsBlock)), truncateAt(174+95))
	rep, err = Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findingsOn(rep, "index-mismatch", eventsDir+"/msgs/index.db") {
		if strings.Contains(f.Remedy, "remove "+eventsDir+"/msgs/index.db") {
			warnedBefore(t, f.Remedy, "remove "+eventsDir+"/msgs/index.db", "destroys its record", "cp "+remedy.ShellQuote(eventsDir+"/msgs/index.db"))
		}
	}

	b, err := bundle.Open(corruptBundle, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := Load(b)
	g := &model.Group{Name: "S-R3F-x", Kind: "stream"}
	warnedBefore(t, peers.QuorumRemedy(m, g, 3, 1, []string{"abcdefgh"}).Text(), "remove each missing peer", "deletes the removed peer's copy", "copy every server's folder")
	warnedBefore(t, remedy.PeerRemoveRemedy(m, "S-R3F-x", []string{"abcdefgh"}).Text(), "scale the asset to R1 and back", "copy every server's folder")
	warnedBefore(t, meta.MetaSplitRemedy(m, nil).Text(), "move (do not delete)", "discards its assignments", "copy the stream folders that only one side assigns out")
}

// n1OrdersBlock is the one block of R3 stream ORDERS on n1 of the flat
// bundle: seq 4 is a live record at offset 268, seq 30 a deleted one
// (index.db's delete map and a tombstone at the block's end say so) at 2571.
const n1OrdersBlock = "store-n1/$G/streams/ORDERS/msgs/1.blk"

// TestBitFlipInReplicaIsOneFinding: a payload bit flipped in one replica's
// record of an R3 stream costs that record on that replica only. For a live
// message: one critical store-corrupt naming the sequence, the copy counts
// one message less, and no replica-gap (the damaged copy is not accused of
// lacking what it holds damaged, the others are not accused of lacking what
// they deleted). For a deleted message: one warning, the copy's figures
// equal the other replicas', nothing lost.
func TestBitFlipInReplicaIsOneFinding(t *testing.T) {
	for _, tc := range []struct {
		name      string
		off       int // a payload byte of the record
		seq       uint64
		severity  report.Severity
		lostMsgs  uint64
		lostRange bool
	}{
		{"live record", 268 + 22 + len("orders.new") + 5, 4, report.Critical, 1, true},
		{"deleted record", 2571 + 22 + len("orders.cancelled") + 56 + 100, 30, report.Warning, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, corruptBundle)
			rewrite(t, filepath.Join(dir, filepath.FromSlash(n1OrdersBlock)), flipBit(tc.off, 2))
			rep, err := Run(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var store, other []report.Finding
			for _, f := range rep.Findings {
				switch {
				case f.Code == "store-corrupt" && f.File == n1OrdersBlock:
					store = append(store, f)
				case f.Stream == "ORDERS" && f.Severity != report.Info:
					other = append(other, f)
				}
			}
			if len(store) != 1 || store[0].Seq != tc.seq || store[0].Severity != tc.severity || (len(store[0].Ranges) > 0) != tc.lostRange {
				t.Fatalf("want one %s store-corrupt at seq %d: %s", tc.severity, tc.seq, summarize(store))
			}
			if len(other) != 0 {
				t.Errorf("one damage, yet also %s", summarize(other))
			}
			n1, n2 := onDisk(t, rep, "ORDERS", "n1"), onDisk(t, rep, "ORDERS", "n2")
			if n1.Messages+tc.lostMsgs != n2.Messages || n1.LastSeq != n2.LastSeq || n1.FirstSeq != n2.FirstSeq {
				t.Errorf("n1 %d msgs %d..%d, n2 %d msgs %d..%d: want n1 to lack %d", n1.Messages, n1.FirstSeq, n1.LastSeq, n2.Messages, n2.FirstSeq, n2.LastSeq, tc.lostMsgs)
			}
			if tc.lostMsgs == 0 && n1.Deleted != n2.Deleted {
				t.Errorf("deleted: n1 %d, n2 %d", n1.Deleted, n2.Deleted)
			}
		})
	}
}
