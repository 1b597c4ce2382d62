package main

// `go run . perturb`: a seeded differential run of block-level damage.
// For each version, one standalone server writes a base store (an
// ORDERS-shaped stream whose one block ends in tombstones, and CHUNKS of
// several blocks); each draw copies it, applies one class of damage at a
// random place, starts the real server on a copy of that, records which
// sequences it serves, and holds jsforensics' report of the damaged copy to
// it (the rules of TestPerturbedStoresAgreeWithServer): the sequences the
// server no longer serves are named lost by critical store-corrupt, the
// deleted ones it serves again are named as such, nothing else is claimed.
// Prints a class × version table and writes every disagreement under -out.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// perturbClasses are the damages drawn from.
var perturbClasses = []string{"cut-record-boundary", "torn-mid-record", "cut-in-tombstones", "block-removed", "index-deleted", "index-emptied"}

// PerturbCase is one draw, as written for a disagreement.
type PerturbCase struct {
	Version  string      `json:"version"`
	Seed     int64       `json:"seed"`
	Draw     int         `json:"draw"`
	Damage   Damage      `json:"damage"`
	Before   ServedState `json:"before"`
	After    ServedState `json:"after"`
	Lost     []SeqRange  `json:"lost"`    // served before, not after
	Back     []SeqRange  `json:"back"`    // served after, not before
	Claimed  []SeqRange  `json:"claimed"` // store-corrupt: lost
	Revived  []SeqRange  `json:"revived"` // store-corrupt: served again
	Agree    bool        `json:"agree"`
	Why      string      `json:"why,omitempty"`
	Findings []reportRef `json:"findings"`
	// Cluster: what the restarted cluster did (peers-size-flipped).
	Cluster *ClusterTruth `json:"cluster,omitempty"`
	// RaftFiles: what the restarted cluster did (raftfiles-*).
	RaftFiles *RaftFilesTruth `json:"raft_files,omitempty"`
}

type reportRef struct {
	Code     string     `json:"code"`
	Severity string     `json:"severity"`
	Group    string     `json:"group"`
	Server   string     `json:"server"`
	Account  string     `json:"account"`
	Stream   string     `json:"stream"`
	Consumer string     `json:"consumer"`
	File     string     `json:"file"`
	Offset   *int64     `json:"offset"`
	Message  string     `json:"message"`
	Ranges   []SeqRange `json:"ranges"`
}

// sampleClasses are the classes a -samples run keeps one agreeing draw of
// per version (testdata/perturbed/perturbed-<class>-<v>: bundle/ and
// case.json), for TestPerturbedSamples.
var sampleClasses = map[string]bool{"peers-size-flipped": true, "captures-subset": true, "logs-missing": true, "raftfiles-later": true, "raftfiles-earlier": true}

func runPerturb(ctx context.Context, out, samples string, seed int64, n int, versions, only []string) error {
	sampled := map[string]bool{}
	scratch, err := os.MkdirTemp("", "jsf-perturb-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	bin := filepath.Join(scratch, "jsforensics")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/jsforensics")
	build.Dir = filepath.Join("..", "..")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building jsforensics: %v\n%s", err, b)
	}
	type cell struct{ n, agree int }
	table := map[string]map[string]*cell{}
	total, agreed, retried := 0, 0, 0
	start := time.Now()
	for _, v := range versions {
		// Each version draws from its own stream: a version's draws do not
		// depend on which versions ran before it.
		rng := rand.New(rand.NewSource(seed ^ int64(crc32.ChecksumIEEE([]byte(v)))))
		base, before, err := perturbBase(ctx, filepath.Join(scratch, v), v)
		if err != nil {
			return fmt.Errorf("%s: %w", v, err)
		}
		// A base the loaded machine failed to write (seen: 2.10.27 "no
		// suitable peers for placement" for 30 s) is written again.
		var cbase *clusterBase
		for try := 1; ; try++ {
			dir := filepath.Join(scratch, v, fmt.Sprint("cluster", try))
			if cbase, err = perturbClusterBase(ctx, dir, v, bin); err == nil || try == 3 || ctx.Err() != nil {
				break
			}
			retried++
			logf("%s: cluster base: %v; writing it again", v, err)
			os.RemoveAll(dir)
		}
		if err != nil {
			return fmt.Errorf("%s: cluster base: %w", v, err)
		}
		classes := append(append([]string(nil), perturbClasses...), clusterClasses...)
		if len(only) > 0 {
			classes = only
		}
		for i := 0; i < n; i++ {
			class := classes[rng.Intn(len(classes))]
			drawDir := filepath.Join(scratch, v, fmt.Sprintf("draw%d", i))
			var c *PerturbCase
			// A harness failure (a server slow to answer on a loaded
			// machine) is no verdict: the draw is made again, twice at most.
			for try := 1; ; try++ {
				os.RemoveAll(drawDir)
				if isClusterClass(class) {
					c, err = perturbClusterDraw(ctx, drawDir, v, cbase, class, rng, bin)
				} else {
					c, err = perturbDraw(ctx, drawDir, v, base, before, class, rng, bin)
				}
				if err == nil || try == 3 || ctx.Err() != nil {
					break
				}
				retried++
				logf("%s draw %d (%s): %v; drawing again", v, i, class, err)
			}
			if err != nil {
				return fmt.Errorf("%s draw %d (%s): %w", v, i, class, err)
			}
			c.Seed, c.Draw = seed, i
			os.RemoveAll(filepath.Join(drawDir, "restart"))
			os.RemoveAll(filepath.Join(drawDir, "restart2"))
			if table[class] == nil {
				table[class] = map[string]*cell{}
			}
			if table[class][v] == nil {
				table[class][v] = &cell{}
			}
			table[class][v].n++
			total++
			if c.Agree && samples != "" && sampleClasses[class] && !sampled[class+v] {
				sampled[class+v] = true
				if err := writeSample(filepath.Join(samples, "perturbed-"+class+"-"+v), drawDir, c); err != nil {
					return err
				}
			}
			if c.Agree {
				table[class][v].agree++
				agreed++
				os.RemoveAll(drawDir)
				continue
			}
			logf("DISAGREE %s draw %d %s %s: %s", v, i, c.Damage.Class, c.Damage.File, c.Why)
			if out != "" {
				dir := filepath.Join(out, fmt.Sprintf("%s-%d-%s", v, i, class))
				if err := copyTree(drawDir, filepath.Join(dir, "draw")); err != nil {
					return err
				}
				b, _ := json.MarshalIndent(c, "", "  ")
				if err := os.WriteFile(filepath.Join(dir, "case.json"), append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
		}
	}
	var classes []string
	for c := range table {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	// Columns by release, whatever order the versions ran in.
	versions = append([]string(nil), versions...)
	sort.SliceStable(versions, func(i, j int) bool { return versionLess(versions[i], versions[j]) })
	fmt.Printf("| class | %s |\n|---|%s\n", strings.Join(versions, " | "), strings.Repeat("---|", len(versions)))
	for _, c := range classes {
		var cells []string
		for _, v := range versions {
			if x := table[c][v]; x != nil {
				cells = append(cells, fmt.Sprintf("%d/%d", x.agree, x.n))
			} else {
				cells = append(cells, "-")
			}
		}
		fmt.Printf("| %s | %s |\n", c, strings.Join(cells, " | "))
	}
	fmt.Printf("perturb: seed %d, %d draws over %d versions and %d classes, %d agree, %d disagree (%d harness errors drawn again), in %v\n", seed, total, len(versions), len(classes), agreed, total-agreed, retried, time.Since(start).Round(time.Second))
	if agreed != total {
		return fmt.Errorf("%d disagreements", total-agreed)
	}
	return nil
}

// perturbBase writes the base store with a standalone server of version v
// and returns its JetStream root and each stream's state before damage.
func perturbBase(ctx context.Context, dir, v string) (string, map[string]ServedState, error) {
	c, err := NewCluster(ctx, dir, v, "solo", []string{"solo"})
	if err != nil {
		return "", nil, err
	}
	defer c.Kill()
	s := c.Servers[0]
	s.NoCluster = true
	if err := s.Start(ctx); err != nil {
		return "", nil, err
	}
	nc, js, err := connectWait(ctx, s)
	if err != nil {
		return "", nil, err
	}
	defer nc.Close()
	if err := ordersLike(ctx, js, "ORDERS", "orders", 1); err != nil {
		return "", nil, err
	}
	if err := chunks(ctx, js); err != nil {
		return "", nil, err
	}
	before := map[string]ServedState{}
	for _, st := range []string{"ORDERS", "CHUNKS"} {
		b, _, err := stateOf(ctx, s, st)
		if err != nil {
			return "", nil, err
		}
		if b.Served, err = served(ctx, js, st, b.LastSeq); err != nil {
			return "", nil, err
		}
		before[st] = b
	}
	nc.Close()
	if err := s.Stop(); err != nil {
		return "", nil, err
	}
	return s.JSRoot(), before, nil
}

// perturbDraw applies one damage of class to a copy of base, restarts the
// server on a copy of that, and compares the report with what it serves.
func perturbDraw(ctx context.Context, dir, v, base string, before map[string]ServedState, class string, rng *rand.Rand, bin string) (*PerturbCase, error) {
	store := filepath.Join(dir, "bundle", "store-solo")
	if err := copyTree(base, store); err != nil {
		return nil, err
	}
	stream := "ORDERS"
	if class == "block-removed" {
		stream = "CHUNKS"
	}
	d, err := damageAt(store, "$G", stream, class, rng)
	if err != nil {
		return nil, err
	}
	d.Server, d.File = "solo", "store-solo/"+d.File
	c := &PerturbCase{Version: v, Damage: d, Before: before[stream]}

	r, err := NewCluster(ctx, filepath.Join(dir, "restart"), v, "solo", []string{"solo"})
	if err != nil {
		return nil, err
	}
	defer r.Kill()
	rs := r.Servers[0]
	rs.NoCluster = true
	if err := copyTree(store, rs.JSRoot()); err != nil {
		return nil, err
	}
	if err := rs.Start(ctx); err != nil {
		return nil, err
	}
	nc, js, err := connectWait(ctx, rs)
	if err != nil {
		return nil, err
	}
	err = waitFor(ctx, 20*time.Second, "restored "+stream, func() (bool, error) {
		_, ok, err := stateOf(ctx, rs, stream)
		return ok, err
	})
	if err != nil {
		nc.Close()
		return nil, err
	}
	c.After, _, _ = stateOf(ctx, rs, stream)
	c.After.Served, err = served(ctx, js, stream, max(c.After.LastSeq, c.Before.LastSeq))
	nc.Close()
	if err != nil {
		return nil, err
	}
	if err := rs.Stop(); err != nil {
		return nil, err
	}
	c.Lost, c.Back = minusRanges(c.Before.Served, c.After.Served), minusRanges(c.After.Served, c.Before.Served)

	rep := exec.CommandContext(ctx, bin, "analyze", filepath.Join(dir, "bundle"), "--format", "json")
	outb, _ := rep.Output() // the exit code says the severity
	var doc struct {
		Findings []reportRef `json:"findings"`
	}
	if err := json.Unmarshal(outb, &doc); err != nil {
		return nil, fmt.Errorf("report of %s: %v", dir, err)
	}
	var why []string
	for _, f := range doc.Findings {
		if f.Stream != stream {
			continue
		}
		c.Findings = append(c.Findings, f)
		switch {
		case f.Code == "store-corrupt" && (strings.Contains(f.Message, "serves them again")):
			c.Revived = append(c.Revived, f.Ranges...)
		case f.Code == "store-corrupt" && strings.Contains(f.Message, "deletes them again"):
			// R3: the other replicas record the deletes, the stream leader
			// applies them again: neither lost nor revived.
		case f.Code == "store-corrupt" && f.Severity == "critical":
			c.Claimed = append(c.Claimed, f.Ranges...)
		case f.Code == "index-mismatch" && f.Severity != "info" && (len(c.Lost) > 0 || len(c.Back) > 0):
			why = append(why, "index-mismatch "+f.Severity+" where the server lost or revived messages")
		}
	}
	c.Claimed, c.Revived = normSeqRanges(c.Claimed), normSeqRanges(c.Revived)
	if rangesKey(c.Claimed) != rangesKey(c.Lost) {
		why = append(why, fmt.Sprintf("server lost %s, report names %s", rangesKey(c.Lost), rangesKey(c.Claimed)))
	}
	if rangesKey(c.Revived) != rangesKey(c.Back) {
		why = append(why, fmt.Sprintf("server serves deleted %s again, report names %s", rangesKey(c.Back), rangesKey(c.Revived)))
	}
	c.Agree, c.Why = len(why) == 0, strings.Join(why, "; ")
	return c, nil
}

// damageAt applies class at a place drawn from rng; the fixed-place
// classes of damageStream are the same damage at one chosen place.
func damageAt(root, account, stream, class string, rng *rand.Rand) (Damage, error) {
	msgs := filepath.Join(root, account, "streams", stream, "msgs")
	rel := func(p string) string { r, _ := filepath.Rel(root, p); return filepath.ToSlash(r) }
	switch class {
	case "index-deleted", "index-emptied":
		p := filepath.Join(msgs, "index.db")
		fi, err := os.Stat(p)
		if err != nil {
			return Damage{}, err
		}
		d := Damage{Stream: stream, Class: class, File: rel(p), SizeBefore: fi.Size()}
		if class == "index-deleted" {
			d.Removed = true
			return d, os.Remove(p)
		}
		return d, os.Truncate(p, 0)
	case "block-removed":
		blks, err := blockFiles(msgs)
		if err != nil {
			return Damage{}, err
		}
		if len(blks) < 3 {
			return Damage{}, fmt.Errorf("%s: %d blocks, no middle one", msgs, len(blks))
		}
		p := blks[1+rng.Intn(len(blks)-2)]
		fi, err := os.Stat(p)
		if err != nil {
			return Damage{}, err
		}
		return Damage{Stream: stream, Class: class, File: rel(p), SizeBefore: fi.Size(), Removed: true}, os.Remove(p)
	}
	p, err := lastBlock(msgs)
	if err != nil {
		return Damage{}, err
	}
	recs, size, err := blockRecords(p)
	if err != nil {
		return Damage{}, err
	}
	var msgRecs, tombs []blockRecord
	for _, r := range recs {
		if r.tombstone {
			tombs = append(tombs, r)
		} else {
			msgRecs = append(msgRecs, r)
		}
	}
	var at int
	switch class {
	case "cut-record-boundary": // at the start of a message record after the first
		at = msgRecs[1+rng.Intn(len(msgRecs)-1)].off
	case "torn-mid-record": // inside any record
		r := recs[rng.Intn(len(recs))]
		at = r.off + 1 + rng.Intn(r.len-1)
	case "cut-in-tombstones": // at the start of a tombstone after the first
		if len(tombs) < 2 {
			return Damage{}, fmt.Errorf("%s: %d tombstones", p, len(tombs))
		}
		at = tombs[1+rng.Intn(len(tombs)-1)].off
	default:
		return Damage{}, fmt.Errorf("unknown class %q", class)
	}
	d, err := cutBlock(p, recs, size, at, class)
	d.Stream, d.File = stream, rel(p)
	return d, err
}

func minusRanges(a, b []SeqRange) []SeqRange {
	in := map[uint64]bool{}
	for _, r := range b {
		for q := r.First; q <= r.Last; q++ {
			in[q] = true
		}
	}
	var out []SeqRange
	for _, r := range a {
		for q := r.First; q <= r.Last; q++ {
			if !in[q] {
				out = appendSeq(out, q)
			}
		}
	}
	return out
}

func appendSeq(rs []SeqRange, q uint64) []SeqRange {
	if n := len(rs); n > 0 && rs[n-1].Last+1 == q {
		rs[n-1].Last = q
		return rs
	}
	return append(rs, SeqRange{First: q, Last: q})
}

func normSeqRanges(rs []SeqRange) []SeqRange {
	set := map[uint64]bool{}
	for _, r := range rs {
		for q := r.First; q <= r.Last; q++ {
			set[q] = true
		}
	}
	var qs []uint64
	for q := range set {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i] < qs[j] })
	var out []SeqRange
	for _, q := range qs {
		out = appendSeq(out, q)
	}
	return out
}

func rangesKey(rs []SeqRange) string {
	if len(rs) == 0 {
		return "none"
	}
	var parts []string
	for _, r := range rs {
		if r.First == r.Last {
			parts = append(parts, fmt.Sprint(r.First))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r.First, r.Last))
		}
	}
	return strings.Join(parts, ",")
}

// writeSample keeps an agreeing draw: its bundle and case.json.
func writeSample(dir, drawDir string, c *PerturbCase) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := copyTree(filepath.Join(drawDir, "bundle"), filepath.Join(dir, "bundle")); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	return os.WriteFile(filepath.Join(dir, "case.json"), append(b, '\n'), 0o644)
}

// versionLess orders "v2.10.27" before "v2.11.17" (numerically, part by part).
func versionLess(a, b string) bool {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		var x, y int
		fmt.Sscan(pa[i], &x)
		fmt.Sscan(pb[i], &y)
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
