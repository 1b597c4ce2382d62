package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/storeparse"
)

func extract(t *testing.T, bundle string, args ...string) ([]extractedMsg, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "msgs.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"extract", bundle, "-o", out}, args...), &stdout, &stderr); code != exitOK {
		t.Fatalf("extract %v: exit %d: %s", args, code, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var msgs []extractedMsg
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m extractedMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		msgs = append(msgs, m)
	}
	return msgs, stderr.String()
}

// TestExtractLedgerAsPublished: from the bundle whose real servers lost the
// same tail on every replica, extract writes every published message, byte
// for byte as the generator published it (testdata/gen scen_ackloss.go:
// entry i at sequence i on subject ledger.acct<i%7>, every tenth with a
// Nats-Msg-Id), the kept ones from the blocks and the cut tail from the
// stream group's raft WAL; the bundle is unchanged.
func TestExtractLedgerAsPublished(t *testing.T) {
	bundle := filepath.Join(bundles, "acked-lost-v2.15.2", "bundle")
	var w struct {
		Expect struct {
			AckedLast uint64 `json:"acked_last"`
			Cuts      []struct {
				FirstCut uint64 `json:"first_cut_seq"`
			} `json:"cuts"`
		} `json:"expect"`
	}
	wb, err := os.ReadFile(filepath.Join(bundles, "acked-lost-v2.15.2", "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wb, &w); err != nil {
		t.Fatal(err)
	}
	before := treeDigest(t, bundle)
	msgs, stderr := extract(t, bundle, "--stream", "$G/LEDGER")
	if treeDigest(t, bundle) != before {
		t.Fatal("extract changed the bundle")
	}
	if uint64(len(msgs)) != w.Expect.AckedLast {
		t.Fatalf("%d messages, want %d (%s)", len(msgs), w.Expect.AckedLast, stderr)
	}
	firstCut := w.Expect.Cuts[0].FirstCut
	for i, m := range msgs {
		seq := uint64(i + 1)
		wantData := fmt.Sprintf(`{"entry":%d,"amount":%d}`, seq, seq*37%1000)
		wantSubj := fmt.Sprintf("ledger.acct%d", seq%7)
		wantHdr := ""
		if seq%10 == 0 {
			wantHdr = fmt.Sprintf("NATS/1.0\r\nNats-Msg-Id: entry-%d\r\n\r\n", seq)
		}
		wantFrom := "blocks"
		if seq >= firstCut {
			wantFrom = "raft-wal"
		}
		if m.Seq != seq || string(m.Data) != wantData || m.Subject != wantSubj || m.Header != wantHdr || m.Source.From != wantFrom {
			t.Errorf("seq %d: got seq %d %q %q %q from %s; want %q %q %q from %s", seq, m.Seq, m.Subject, m.Header, m.Data, m.Source.From, wantSubj, wantHdr, wantData, wantFrom)
		}
		if seq%10 == 0 && (len(m.Headers["Nats-Msg-Id"]) != 1 || m.Headers["Nats-Msg-Id"][0] != fmt.Sprintf("entry-%d", seq)) {
			t.Errorf("seq %d: headers %v", seq, m.Headers)
		}
	}
}

// blockRecords reads the live-or-not records of every block of one stream
// folder straight through storeparse's block reader: file -> offset ->
// record (subject, header, data).
func blockRecords(t *testing.T, dir, name string) map[string]map[int64][3]string {
	t.Helper()
	out := map[string]map[int64][3]string{}
	blks, _ := filepath.Glob(filepath.Join(dir, "msgs", "*.blk"))
	for _, p := range blks {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		br, err := storeparse.NewBlockReader(p, f, fi.Size(), name+"-"+strings.TrimSuffix(filepath.Base(p), ".blk"))
		if err != nil {
			t.Fatal(err)
		}
		recs := map[int64][3]string{}
		for {
			r, err := br.Next()
			if err == io.EOF {
				break
			}
			if err != nil || !r.ChecksumOK {
				continue
			}
			recs[r.Offset] = [3]string{string(r.Subject), string(r.Header), string(r.Data)}
		}
		f.Close()
		out[filepath.ToSlash(p)] = recs
	}
	return out
}

// TestExtractBlocksAsStored: every message extracted from the healthy
// v2.15.2 bundle is, byte for byte, the record at the file and offset its
// source names, and there are as many as the live servers reported.
func TestExtractBlocksAsStored(t *testing.T) {
	bundle := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	msgs, _ := extract(t, bundle, "--stream", "$G/ORDERS", "--server", "n1")
	recs := blockRecords(t, filepath.Join(bundle, "store-n1", "$G", "streams", "ORDERS"), "ORDERS")
	if want := liveMessages(t, "v2.15.2-flat", "n1", "ORDERS"); len(msgs) != want {
		t.Errorf("%d messages, /jsz said %d", len(msgs), want)
	}
	for _, m := range msgs {
		r, ok := recs[filepath.ToSlash(filepath.Join(bundle, m.Source.File))][m.Source.Offset]
		if !ok || m.Source.From != "blocks" || m.Source.Server != "n1" {
			t.Errorf("seq %d: no record at %s offset %d (%s)", m.Seq, m.Source.File, m.Source.Offset, m.Source.From)
			continue
		}
		if r != [3]string{m.Subject, m.Header, string(m.Data)} {
			t.Errorf("seq %d differs from its record", m.Seq)
		}
	}
}

func liveMessages(t *testing.T, fixture, server, stream string) int {
	t.Helper()
	var w struct {
		Servers []struct {
			Name    string `json:"name"`
			Streams []struct {
				Name     string `json:"name"`
				Messages int    `json:"messages"`
			} `json:"streams"`
		} `json:"servers"`
	}
	b, err := os.ReadFile(filepath.Join(bundles, fixture, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	for _, s := range w.Servers {
		for _, st := range s.Streams {
			if s.Name == server && st.Name == stream {
				return st.Messages
			}
		}
	}
	t.Fatalf("%s: no %s on %s", fixture, stream, server)
	return 0
}

// copyBundle copies a committed bundle tree to a temporary folder.
func copyBundle(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "bundle")
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestExtractFromWALWhenBlocksGone: with the KV stream's block removed from
// every server of a copy of the v2.15.2 bundle, the stream group's raft WAL
// serves the messages, byte for byte those the intact blocks held.
func TestExtractFromWALWhenBlocksGone(t *testing.T) {
	orig := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	intact, _ := extract(t, orig, "--stream", "$G/KV_cfg")
	dir := copyBundle(t, orig)
	removed := 0
	for _, s := range []string{"n1", "n2", "n3"} {
		blks, _ := filepath.Glob(filepath.Join(dir, "store-"+s, "$G", "streams", "KV_cfg", "msgs", "*.blk"))
		for _, b := range blks {
			if err := os.Remove(b); err != nil {
				t.Fatal(err)
			}
			removed++
		}
	}
	if removed == 0 {
		t.Fatal("no block removed")
	}
	got, stderr := extract(t, dir, "--stream", "$G/KV_cfg")
	bySeq := map[uint64]extractedMsg{}
	for _, m := range got {
		if m.Source.From != "raft-wal" || !strings.Contains(m.Source.File, "/_js_/S-") {
			t.Errorf("seq %d from %s %s: want the raft WAL", m.Seq, m.Source.From, m.Source.File)
		}
		bySeq[m.Seq] = m
	}
	if len(intact) == 0 {
		t.Fatal("intact bundle: nothing extracted")
	}
	for _, w := range intact {
		g, ok := bySeq[w.Seq]
		if !ok {
			t.Errorf("seq %d: not recovered from the WAL (%s)", w.Seq, stderr)
			continue
		}
		if g.Subject != w.Subject || g.Header != w.Header || !bytes.Equal(g.Data, w.Data) || !g.Time.Equal(w.Time) {
			t.Errorf("seq %d: WAL %q %q %q, blocks %q %q %q", w.Seq, g.Subject, g.Header, g.Data, w.Subject, w.Header, w.Data)
		}
	}
}

// TestExtractPastBadRecord: one payload bit flipped in the middle of n1's
// ORDERS block costs that message only; every message after it is
// extracted, as in the intact copy, and the damaged one is counted.
func TestExtractPastBadRecord(t *testing.T) {
	orig := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	intact, _ := extract(t, orig, "--stream", "$G/ORDERS", "--server", "n1")
	dir := copyBundle(t, orig)
	victim := intact[len(intact)/2]
	blk := filepath.Join(dir, filepath.FromSlash(victim.Source.File))
	data, err := os.ReadFile(blk)
	if err != nil {
		t.Fatal(err)
	}
	// The record's payload ends 8 bytes (the checksum) before the record.
	br, err := storeparse.NewBlockReader(blk, bytes.NewReader(data), int64(len(data)), "ORDERS-"+strings.TrimSuffix(filepath.Base(blk), ".blk"))
	if err != nil {
		t.Fatal(err)
	}
	var end int64 = -1
	for {
		r, err := br.Next()
		if err != nil {
			break
		}
		if r.Offset == victim.Source.Offset {
			end = r.Offset + int64(r.Len) - 8
		}
	}
	if end < 0 || len(victim.Data) == 0 {
		t.Fatalf("victim seq %d not found", victim.Seq)
	}
	data[end-1] ^= 0x04
	if err := os.WriteFile(blk, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, stderr := extract(t, dir, "--stream", "$G/ORDERS", "--server", "n1")
	if !strings.Contains(stderr, "1 record(s) failing their checksum") {
		t.Errorf("stderr does not count the bad record: %s", stderr)
	}
	var want []extractedMsg
	for _, m := range intact {
		if m.Seq != victim.Seq {
			want = append(want, m)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d (all but seq %d)", len(got), len(want), victim.Seq)
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Data, want[i].Data) || got[i].Header != want[i].Header {
			t.Errorf("message %d: seq %d, want seq %d", i, got[i].Seq, want[i].Seq)
		}
	}
}

// TestExtractRefusesOutputInBundle: -o inside the bundle is refused and
// nothing is written.
func TestExtractRefusesOutputInBundle(t *testing.T) {
	bundle := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	before := treeDigest(t, bundle)
	var stdout, stderr bytes.Buffer
	code := run([]string{"extract", bundle, "--stream", "$G/ORDERS", "-o", filepath.Join(bundle, "store-n1", "out.jsonl")}, &stdout, &stderr)
	if code != exitUnknown || !strings.Contains(stderr.String(), "never writes into its input") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if treeDigest(t, bundle) != before {
		t.Error("bundle changed")
	}
}

// TestExtractWALReplaysRemovals: with every ORDERS block removed from a copy
// of the v2.10.22 bundle, nats-1's raft WAL of the stream group (60
// streamMsg entries, then deleteMsg 2, 5, 3 and a purge of subject
// orders.cancelled, as the real servers wrote them) gives exactly the
// messages the intact blocks held, byte for byte: the deletes and the
// filtered purge are replayed.
func TestExtractWALReplaysRemovals(t *testing.T) {
	orig := filepath.Join(bundles, "v2.10.22-per-server", "bundle")
	intact, _ := extract(t, orig, "--stream", "$G/ORDERS", "--server", "nats-1")
	dir := copyBundle(t, orig)
	blks, _ := filepath.Glob(filepath.Join(dir, "nats-*", "data", "jetstream", "$G", "streams", "ORDERS", "msgs", "*.blk"))
	if len(blks) == 0 {
		t.Fatal("no ORDERS block")
	}
	for _, b := range blks {
		if err := os.Remove(b); err != nil {
			t.Fatal(err)
		}
	}
	got, stderr := extract(t, dir, "--stream", "$G/ORDERS", "--server", "nats-1")
	if len(got) != len(intact) {
		t.Fatalf("%d messages from the WAL, the blocks held %d (%s)", len(got), len(intact), stderr)
	}
	for i, w := range intact {
		g := got[i]
		if g.Seq != w.Seq || g.Subject != w.Subject || g.Header != w.Header || !bytes.Equal(g.Data, w.Data) || g.Source.From != "raft-wal" {
			t.Errorf("seq %d: WAL gives seq %d %q from %s", w.Seq, g.Seq, g.Subject, g.Source.From)
		}
	}
}

// TestExtractDivergedReplicas: on the membership bundle, whose real replicas
// hold different messages under the same sequences, extract writes each
// content once, from the servers that hold it; the sequences written twice
// are exactly those the replica-divergence finding names.
func TestExtractDivergedReplicas(t *testing.T) {
	bundle := filepath.Join(bundles, "membership-v2.12.1", "bundle")
	msgs, stderr := extract(t, bundle, "--stream", "APP/RECORDS")
	by := map[uint64][]extractedMsg{}
	for _, m := range msgs {
		by[m.Seq] = append(by[m.Seq], m)
	}
	var twice []uint64
	for seq, ms := range by {
		if len(ms) < 2 {
			continue
		}
		twice = append(twice, seq)
		for i := 1; i < len(ms); i++ {
			if bytes.Equal(ms[i].Data, ms[0].Data) && ms[i].Subject == ms[0].Subject && ms[i].Header == ms[0].Header {
				t.Errorf("seq %d written twice with the same content", seq)
			}
		}
	}
	if len(twice) == 0 {
		t.Fatal("no sequence with two contents")
	}
	if !strings.Contains(stderr, fmt.Sprintf("%d sequence(s) with different content", len(twice))) {
		t.Errorf("stderr: %s", stderr)
	}
	rep, err := analysis.Run(bundle, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	diverged := map[uint64]bool{}
	for _, f := range rep.Findings {
		if f.Code == "replica-divergence" && f.Stream == "RECORDS" {
			for _, r := range f.Ranges {
				for s := r.First; s <= r.Last; s++ {
					diverged[s] = true
				}
			}
		}
	}
	if len(diverged) != len(twice) {
		t.Errorf("%d sequences written twice, replica-divergence names %d", len(twice), len(diverged))
	}
	for _, s := range twice {
		if !diverged[s] {
			t.Errorf("seq %d written twice but not named diverged", s)
		}
	}
}

// TestExtractRenamedStreamFromWAL: in the rename fixtures (v2.15.2 and
// v2.12.1) every server deleted its ORDERS folder at its first start under
// the new name; the stream group's raft WAL still holds the 20 messages, and
// extract writes them byte for byte as the generator published them
// (testdata/gen scen_rename.go: payload("ORDERS", i, 48) on orders.x, i from
// 0, i.e. the first 48 bytes of "ORDERS #<i, 6 digits> level=info …").
func TestExtractRenamedStreamFromWAL(t *testing.T) {
	for _, fx := range []string{"rename-v2.15.2", "rename-v2.12.1"} {
		t.Run(fx, func(t *testing.T) {
			bundle := filepath.Join(bundles, fx, "bundle")
			if m, _ := filepath.Glob(filepath.Join(bundle, "*", "data", "jetstream", "APP", "streams", "ORDERS")); len(m) != 0 {
				t.Fatalf("the fixture still has ORDERS folders: %v", m)
			}
			var w struct {
				Expect struct {
					MessagesBefore map[string]map[string]int `json:"messages_before"`
				} `json:"expect"`
			}
			wb, err := os.ReadFile(filepath.Join(bundles, fx, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(wb, &w); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, n := range w.Expect.MessagesBefore["APP > ORDERS"] {
				want = max(want, n)
			}
			msgs, stderr := extract(t, bundle, "--stream", "APP/ORDERS")
			if want == 0 || len(msgs) != want {
				t.Fatalf("%d messages, the live servers held %d (%s)", len(msgs), want, stderr)
			}
			for i, m := range msgs {
				line := fmt.Sprintf("ORDERS #%06d level=info component=worker msg=\"processed batch\" ok=true; ", i)
				if m.Seq != uint64(i+1) || m.Subject != "orders.x" || string(m.Data) != line[:48] || m.Source.From != "raft-wal" {
					t.Errorf("message %d: seq %d %q %q from %s", i, m.Seq, m.Subject, m.Data, m.Source.From)
				}
			}
		})
	}
}

// TestExtractEncrypted: the encrypted v2.15.2 fixture ran the same workload
// as v2.15.2-flat; with the servers' key (from its want.json, never printed)
// extract reads its sealed ORDERS blocks into the same messages as the plain
// fixture's (header order aside: the client writes a map); without the key
// it reads none and says the copies are sealed.
func TestExtractEncrypted(t *testing.T) {
	var w struct {
		Expect struct {
			Key string `json:"key"`
		} `json:"expect"`
	}
	wb, err := os.ReadFile(filepath.Join(bundles, "encrypted-v2.15.2", "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wb, &w); err != nil || w.Expect.Key == "" {
		t.Fatalf("no key in want.json: %v", err)
	}
	enc := filepath.Join(bundles, "encrypted-v2.15.2", "bundle")
	t.Setenv(keyEnv, "")
	none, stderr := extract(t, enc, "--stream", "$G/ORDERS")
	if len(none) != 0 || !strings.Contains(stderr, "encrypted at rest could not be read") {
		t.Errorf("without the key: %d messages, %s", len(none), stderr)
	}
	got, stderr := extract(t, enc, "--stream", "$G/ORDERS", "--server", "enc-0", "--key", w.Expect.Key)
	if strings.Contains(stderr, w.Expect.Key) {
		t.Fatal("the key is printed")
	}
	plain, _ := extract(t, filepath.Join(bundles, "v2.15.2-flat", "bundle"), "--stream", "$G/ORDERS", "--server", "n1")
	if len(got) != len(plain) || len(got) == 0 {
		t.Fatalf("%d messages with the key, the plain fixture has %d (%s)", len(got), len(plain), stderr)
	}
	for i := range plain {
		g, p := got[i], plain[i]
		if g.Seq != p.Seq || g.Subject != p.Subject || !bytes.Equal(g.Data, p.Data) || fmt.Sprint(g.Headers) != fmt.Sprint(p.Headers) {
			t.Errorf("seq %d: %q %q %v, plain %q %q %v", p.Seq, g.Subject, g.Data, g.Headers, p.Subject, p.Data, p.Headers)
		}
	}
}

// TestExtractSummaryCountsLeftOut: on the replica whose last block lost
// the tombstones of API deletes (perturbed-tombstones-v2.15.3; the real
// cluster restarted on a copy served none of them), extract --server of
// that replica writes no deleted message, and its summary says how many it
// left out, which sequences and which record says so (its own index.db).
func TestExtractSummaryCountsLeftOut(t *testing.T) {
	dir := filepath.Join("../../testdata/perturbed", "perturbed-tombstones-v2.15.3")
	var o struct {
		Torn   string `json:"torn"`
		Damage []struct {
			CutSeq        uint64 `json:"cut_seq"`
			TombstonesCut int    `json:"tombstones_cut"`
		} `json:"damage"`
		Deleted []uint64 `json:"deleted"`
		Msgs    []struct {
			Seq uint64 `json:"seq"`
		} `json:"msgs"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	var cut []string
	for _, d := range o.Deleted {
		if d >= o.Damage[0].CutSeq {
			cut = append(cut, fmt.Sprint(d))
		}
	}
	msgs, stderr := extract(t, filepath.Join(dir, "bundle"), "--stream", "SHOP/LEDGER", "--server", o.Torn)
	if len(msgs) != len(o.Msgs) {
		t.Errorf("%d messages, the cluster served %d", len(msgs), len(o.Msgs))
	}
	for _, m := range msgs {
		if m.Source.Server != o.Torn {
			t.Errorf("seq %d from %s", m.Seq, m.Source.Server)
		}
	}
	want := fmt.Sprintf("left out: %d sequence(s), %s's index.db records it deleted: %s", o.Damage[0].TombstonesCut, o.Torn, strings.Join(cut, ", "))
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, fmt.Sprintf("%d sequence(s) the servers would not serve left out", len(cut))) {
		t.Errorf("stderr %q\nwant %q", stderr, want)
	}
}
