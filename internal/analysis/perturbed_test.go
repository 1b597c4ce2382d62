package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

// perturbedDir holds damaged copies of real stores with what the real
// server did on a copy of each (testdata/gen scen_perturb.go).
const perturbedDir = "../../testdata/perturbed"

// oracle is oracle.json (testdata/gen Oracle), the parts used here.
type oracle struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Mode    string `json:"mode"`
	Damage  []struct {
		Server, Stream, Class, File string
		Removed                     bool
	} `json:"damage"`
	Streams []struct {
		Server, Account, Stream string
		Before, After           oracleState
	} `json:"streams"`
}

type oracleState struct {
	FirstSeq   uint64         `json:"first_seq"`
	LastSeq    uint64         `json:"last_seq"`
	Msgs       uint64         `json:"messages"`
	NumDeleted int            `json:"num_deleted"`
	Served     []report.Range `json:"served"`
	ServedErr  string         `json:"served_error"`
}

func (a oracleState) sameFigures(b oracleState) bool {
	return a.FirstSeq == b.FirstSeq && a.LastSeq == b.LastSeq && a.Msgs == b.Msgs && a.NumDeleted == b.NumDeleted
}

func loadOracles(t *testing.T) map[string]oracle {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(perturbedDir, "*", "oracle.json"))
	if len(files) == 0 {
		t.Fatal("no oracle.json under " + perturbedDir)
	}
	out := map[string]oracle{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o oracle
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Dir(f)] = o
	}
	return out
}

// TestPerturbedStoresAgreeWithServer holds the analysis of each damaged
// state to what the real server (v2.10.27, v2.12.15, v2.15.3) did on a
// copy of it:
//   - where the server no longer serves messages it served before, a
//     critical store-corrupt finding names the damaged file, an offset and
//     exactly those sequences (not an index.db disagreement);
//   - where it serves deleted messages again, a critical finding names
//     exactly those;
//   - no index-mismatch above info on a stream whose damage is named;
//   - no warning or critical finding names a server the restarted cluster
//     serves in full (a healthy replica is never blamed).
func TestPerturbedStoresAgreeWithServer(t *testing.T) {
	for dir, o := range loadOracles(t) {
		if o.Mode == "crash" || o.Mode == "metasnapdel" {
			continue // TestCrashWALIsPending, TestMetaSnapDelNoAssetLost
		}
		t.Run(o.Name, func(t *testing.T) {
			rep, err := Run(filepath.Join(dir, "bundle"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			damaged := map[string]string{} // server/stream -> file
			for _, d := range o.Damage {
				damaged[d.Server+"/"+d.Stream] = d.File
			}
			var streamServed []report.Range // a cluster's: served by the stream leader
			for _, s := range o.Streams {
				if s.After.Served != nil {
					streamServed = s.After.Served
				}
			}
			for _, s := range o.Streams {
				file, isDamaged := damaged[s.Server+"/"+s.Stream]
				var corrupt []report.Finding
				for _, f := range rep.Findings {
					if f.Server != s.Server || f.Stream != s.Stream {
						continue
					}
					switch {
					case f.Code == "store-corrupt":
						corrupt = append(corrupt, f)
					case f.Code == "index-mismatch" && isDamaged && f.Severity != report.Info:
						t.Errorf("%s %s: index-mismatch %s where the block is damaged: %s", s.Server, s.Stream, f.Severity, f.Message)
					}
				}
				if o.Mode == "cluster" {
					full := s.After.sameFigures(s.Before) && len(seqset.Of(s.Before.Served...).Subtract(seqset.Of(streamServed...))) == 0
					if isDamaged {
						if len(corrupt) == 0 {
							t.Errorf("%s %s: %s damaged, no store-corrupt finding", s.Server, s.Stream, file)
						}
						continue
					}
					if !full {
						continue
					}
					for _, f := range rep.Findings {
						if f.Server == s.Server && f.Severity != report.Info {
							t.Errorf("%s serves %s in full after the restart (%d messages, %d..%d), yet: %s %s %s", s.Server, s.Stream, s.After.Msgs, s.After.FirstSeq, s.After.LastSeq, f.Severity, f.Code, f.Message)
						}
					}
					continue
				}
				if s.After.ServedErr != "" {
					t.Fatalf("%s %s: oracle has no served set: %s", s.Server, s.Stream, s.After.ServedErr)
				}
				lost := seqset.Of(s.Before.Served...).Subtract(seqset.Of(s.After.Served...))
				back := seqset.Of(s.After.Served...).Subtract(seqset.Of(s.Before.Served...))
				var claimedLost, claimedBack []report.Range
				for _, f := range corrupt {
					if f.Severity != report.Critical || f.File != file || f.Offset == nil {
						t.Errorf("%s %s: store-corrupt %s on %s offset %v, want critical on %s with an offset", s.Server, s.Stream, f.Severity, f.File, f.Offset, file)
					}
					if strings.Contains(f.Message, "served again") || strings.Contains(f.Message, "serves them again") {
						claimedBack = append(claimedBack, f.Ranges...)
					} else {
						claimedLost = append(claimedLost, f.Ranges...)
					}
				}
				if got := seqset.Of(claimedLost...); model.RangesText(got) != model.RangesText(lost) {
					t.Errorf("%s %s (%s): the server lost %s on restart; store-corrupt names lost %s", s.Server, s.Stream, file, model.RangesText(lost), model.RangesText(got))
				}
				if got := seqset.Of(claimedBack...); model.RangesText(got) != model.RangesText(back) {
					t.Errorf("%s %s (%s): the server serves deleted %s again on restart; store-corrupt names %s", s.Server, s.Stream, file, model.RangesText(back), model.RangesText(got))
				}
			}
		})
	}
}

// TestTornTombstonesBlameNoHealthyReplica is issue 21's first case on the
// committed v2.15.2-flat: n3's ORDERS block cut at 5000 bytes, inside the
// 10 KB record of seq 30, takes every tombstone with it while n3's index.db
// still records 2, 3, 5, 6, 10… as deleted. n1 and n2 hold the stream in
// full (the restarted cluster served it from them, and took n3's state
// from its leader: perturbed-replica-v2.15.3 is the same damage); no
// finding may blame them, n3's damage is named with what it costs and what
// a rebuild brings back.
func TestTornTombstonesBlameNoHealthyReplica(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	blk := filepath.Join(dir, "store-n3", "$G", "streams", "ORDERS", "msgs", "1.blk")
	if err := os.Truncate(blk, 5000); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lost, back string
	for _, f := range rep.Findings {
		if (f.Server == "n1" || f.Server == "n2") && f.Severity != report.Info {
			t.Errorf("healthy replica blamed: %s %s %s: %s", f.Severity, f.Code, f.Server, f.Message)
		}
		if f.Code == "store-corrupt" && f.Server == "n3" && f.Stream == "ORDERS" {
			// R3: n1 and n2 record the deletes, which the stream leader
			// applies to n3 again (perturbed-tombstones-*).
			if strings.Contains(f.Message, "deletes them again") {
				back = model.RangesText(f.Ranges)
			} else {
				lost = model.RangesText(f.Ranges)
			}
		}
	}
	// 30, 34, 38… were deleted (orders.cancelled purged), 3 erased.
	if want := "31-33, 35-37, 39-41, 43-45, 47-49, 51-53, and 2 more ranges"; lost != want {
		t.Errorf("n3 lost %q, want %q", lost, want)
	}
	if want := "2, 5-6, 10, 14, 18, 22, and 1 more ranges"; back != want {
		t.Errorf("n3 brings back %q, want %q", back, want)
	}
}

// crashOracle is oracle.json of perturbed-crash-* (testdata/gen CrashOracle).
type crashOracle struct {
	Name      string                 `json:"name"`
	Mode      string                 `json:"mode"`
	Stream    string                 `json:"stream"`
	Acked     []report.Range         `json:"acked"`
	BlockLast map[string]uint64      `json:"block_last"`
	After     map[string]oracleState `json:"after"`
	Served    []report.Range         `json:"served"`
	ServedErr string                 `json:"served_error"`
}

// TestCrashWALIsPending: every server SIGKILLed at once under load left
// acknowledged messages in the stream group's raft WAL (past its snapshot)
// and in no block of some server; restarted together on a copy, every
// server applied the WAL and held every acknowledged message. What the WAL
// will apply is pending: no acked-lost, no replica-gap, and a note names it.
func TestCrashWALIsPending(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(perturbedDir, "*", "oracle.json"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o crashOracle
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if o.Mode != "crash" {
			continue
		}
		n++
		t.Run(o.Name, func(t *testing.T) {
			top := o.Acked[len(o.Acked)-1].Last
			behind := false
			for srv, last := range o.BlockLast {
				behind = behind || last < top
				if a := o.After[srv]; a.LastSeq < top || a.Msgs < top-a.FirstSeq+1-uint64(a.NumDeleted) {
					t.Fatalf("oracle: %s did not get every acked message back (%+v, acked to %d): not this test's case", srv, a, top)
				}
			}
			if !behind || o.ServedErr != "" || len(seqset.Of(o.Acked...).Subtract(seqset.Of(o.Served...))) > 0 {
				t.Fatalf("oracle: blocks %v, acked to %d, served %v (%s): not this test's case", o.BlockLast, top, o.Served, o.ServedErr)
			}
			rep, err := Run(filepath.Join(filepath.Dir(f), "bundle"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, fd := range rep.Findings {
				if fd.Stream == o.Stream && (fd.Code == "acked-lost" || fd.Code == "replica-gap") {
					t.Errorf("the restarted servers served every acknowledged message, yet: %s %s %s: %s", fd.Severity, fd.Code, fd.Server, fd.Message)
				}
			}
			noted := false
			for _, note := range rep.Notes {
				noted = noted || strings.Contains(note, o.Stream) && strings.Contains(note, "apply them at their next start")
			}
			if !noted {
				t.Errorf("no note of the sequences pending in the WAL: %q", rep.Notes)
			}
		})
	}
	if n == 0 {
		t.Fatal("no perturbed-crash oracle")
	}
}

// perturbCase is case.json of a sample a `go run . perturb -samples` run
// kept (testdata/gen PerturbCase), the parts used here.
type perturbCase struct {
	Version string `json:"version"`
	Damage  struct {
		Server, Class, File string
	} `json:"damage"`
	Cluster *struct {
		Group      string `json:"group"`
		SizeBefore int    `json:"size_before"`
		SizeAfter  int    `json:"size_after"`
		Works      bool   `json:"works"`
	} `json:"cluster"`
	RaftFiles *struct {
		Group      string   `json:"group"`
		Works      bool     `json:"works"`
		Complaints []string `json:"complaints"`
	} `json:"raft_files"`
}

// TestPerturbedSamples holds the analysis of each kept sample of the
// cluster classes to what the real servers did:
//   - peers-size-flipped (one server's peers.idx cluster size damaged,
//     the three restarted together on a copy): a finding names the file;
//     where the group worked after the restart (one leader every server
//     names, at the group's own quorum, ORDERS served in full), no critical finding, no
//     quorum-unreachable or meta-split, no warning on another server; a
//     size that lowers the quorum is critical (the restart is a race the
//     damaged server was seen to win, spreading its size to the group);
//   - captures-subset, logs-missing (captures or logs of some servers left
//     out of a healthy cluster's bundle, every server running when
//     captured): the same three servers, no peer-offline, no warning or
//     critical finding (the full bundle has none);
//   - raftfiles-later, raftfiles-earlier (one server's tav.idx, commit.idx
//     or peers.idx of one group taken from a later or an earlier moment of
//     the same servers): where the restarted servers ran the group with one
//     leader, ORDERS whole, and the server logged no warning about it, no
//     warning or critical finding (the undamaged bundles have none); else
//     one names the group or its files.
func TestPerturbedSamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(perturbedDir, "*", "case.json"))
	if len(files) == 0 {
		t.Fatal("no case.json under " + perturbedDir)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c perturbCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			rep, err := Run(filepath.Join(filepath.Dir(file), "bundle"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			class, _, _ := strings.Cut(c.Damage.Class, "/")
			lowered := c.Cluster != nil && c.Cluster.SizeAfter/2+1 < c.Cluster.SizeBefore/2+1
			switch class {
			case "peers-size-flipped":
				located, critical := false, false
				for _, f := range rep.Findings {
					located = located || f.File == c.Damage.File
					critical = critical || f.File == c.Damage.File && f.Severity == report.Critical
					if c.Cluster == nil || !c.Cluster.Works || lowered {
						continue
					}
					if f.Severity == report.Critical || f.Code == "quorum-unreachable" || f.Code == "meta-split" || f.Severity == report.Warning && f.Server != c.Damage.Server {
						t.Errorf("the restarted servers ran %s with one leader at its quorum, yet %s %s %s: %s", c.Cluster.Group, f.Severity, f.Code, f.Server, f.Message)
					}
				}
				if !located {
					t.Errorf("no finding names %s", c.Damage.File)
				}
				if lowered && !critical {
					t.Errorf("%s's size lowers its quorum (the server can win alone and spread it), no critical finding on %s", c.Cluster.Group, c.Damage.File)
				}
			case "captures-subset", "logs-missing":
				var names []string
				for _, s := range rep.Servers {
					names = append(names, s.Name)
				}
				if got := strings.Join(names, " "); got != "c1 c2 c3" {
					t.Errorf("servers %q, want c1 c2 c3", got)
				}
				for _, f := range rep.Findings {
					if f.Code == "peer-offline" || f.Severity != report.Info {
						t.Errorf("%s (every server running when captured): %s %s %s: %s", c.Damage.Class, f.Severity, f.Code, f.Server, f.Message)
					}
				}
			case "raftfiles-later", "raftfiles-earlier":
				rf := c.RaftFiles
				if rf == nil {
					t.Fatal("no raft_files in case.json")
				}
				named := false
				for _, f := range rep.Findings {
					if f.Severity == report.Info {
						continue
					}
					named = named || f.Group == rf.Group || strings.Contains(f.File, "/"+rf.Group+"/")
					if rf.Works && len(rf.Complaints) == 0 {
						t.Errorf("the restarted servers ran %s as if nothing were wrong, yet %s %s %s: %s", rf.Group, f.Severity, f.Code, f.Server, f.Message)
					}
				}
				if (!rf.Works || len(rf.Complaints) > 0) && !named {
					t.Errorf("%s did not run as before (works %v, complaints %q): no warning or critical finding names it", rf.Group, rf.Works, rf.Complaints)
				}
			default:
				t.Fatalf("class %q has no rule here", c.Damage.Class)
			}
		})
	}
}

// TestPeersIdxSizeFlipReported: the first byte of n1's _meta_/peers.idx
// (the low byte of its LE u32 cluster size) flipped on a copy of
// v2.15.2-flat reads as size 252 beside the 3 peers the file lists and
// every other view's 3. Unreported before (peers.idx has no checksum and a
// meta group may expect more peers than it knows while it bootstraps); the
// restarted servers heal it (perturb class peers-size-flipped): a warning
// on the file at offset 0, nothing that calls the meta group stuck or split.
func TestPeersIdxSizeFlipReported(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	p := filepath.Join(dir, "store-n1", "$SYS", "_js_", "_meta_", "peers.idx")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Code == "store-corrupt" && f.File == "store-n1/$SYS/_js_/_meta_/peers.idx" && f.Offset != nil && *f.Offset == 0 {
			found = true
			if f.Severity != report.Warning || !strings.Contains(f.Message, "252") {
				t.Errorf("%s: %s", f.Severity, f.Message)
			}
			continue
		}
		if f.Severity != report.Info {
			t.Errorf("unexpected %s %s %s: %s", f.Severity, f.Code, f.Server, f.Message)
		}
	}
	if !found {
		t.Error("no store-corrupt finding on n1's _meta_/peers.idx at offset 0")
	}
}
