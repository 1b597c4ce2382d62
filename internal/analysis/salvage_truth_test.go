package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

// tombOracle is oracle.json of perturbed-tombstones-<v> (testdata/gen
// scen_tombstones.go): what the restarted cluster returned per sequence.
type tombOracle struct {
	Name    string   `json:"name"`
	Account string   `json:"account"`
	Stream  string   `json:"stream"`
	Deleted []uint64 `json:"deleted"`
	Torn    string   `json:"torn"`
	Damage  []struct {
		TombstonesCut int `json:"tombstones_cut"`
	} `json:"damage"`
	Streams []struct {
		Server string `json:"server"`
	} `json:"streams"`
	Msgs []struct {
		Seq     uint64 `json:"seq"`
		Subject string `json:"subject"`
		Data    string `json:"data"`
	} `json:"msgs"`
	// Direct: per server, what a direct get of a client of that server
	// returned.
	Direct map[string][]report.Range `json:"direct"`
}

// TestExtractServesWhatTheClusterServes: on an R3 stream where one
// replica's last block lost the tombstones of messages deleted through the
// API (its index.db, the other replicas and the group's raft state still
// record the deletes), the real servers (2.10.27, 2.12.15, 2.15.3)
// restarted on a copy served 292 of 300 sequences, to a get from the stream
// and to a direct get of a client of each replica, the torn one too. Extract, of every copy
// and of each server alone (the torn one too), writes exactly those
// messages, byte for byte, and counts the deleted ones it left out.
func TestExtractServesWhatTheClusterServes(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(perturbedDir, "perturbed-tombstones-*", "oracle.json"))
	if len(files) < 2 {
		t.Fatalf("%d perturbed-tombstones fixtures, want one per release line", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o tombOracle
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Msgs) == 0 || len(o.Damage) != 1 || o.Damage[0].TombstonesCut == 0 {
			t.Fatalf("%s: oracle without served messages or a cut in tombstones", f)
		}
		want := map[uint64]string{}
		var gets seqset.Set
		for _, m := range o.Msgs {
			want[m.Seq] = m.Subject + " " + m.Data
			gets.Add(m.Seq)
		}
		// Every replica answered direct gets with the same sequences.
		if len(o.Direct) != len(o.Streams) {
			t.Fatalf("%s: direct gets of %d servers, want %d", f, len(o.Direct), len(o.Streams))
		}
		for srv, d := range o.Direct {
			if !slices.Equal(seqset.Of(d...), gets) {
				t.Fatalf("%s: %s's direct gets %v differ from the stream's gets %v: not this test's case", f, srv, d, gets)
			}
		}
		servers := []string{""}
		for _, s := range o.Streams {
			servers = append(servers, s.Server)
		}
		for _, srv := range servers {
			t.Run(o.Name+"/"+srv, func(t *testing.T) {
				got := map[uint64]string{}
				s, err := Extract(filepath.Join(filepath.Dir(f), "bundle"), bundle.Limits{}, nil,
					SalvageOptions{Account: o.Account, Stream: o.Stream, Server: srv}, func(m *SalvagedMsg) error {
						if _, dup := got[m.Seq]; dup {
							return fmt.Errorf("seq %d written twice", m.Seq)
						}
						if srv != "" && m.Server != srv {
							return fmt.Errorf("seq %d from %s, asked for %s", m.Seq, m.Server, srv)
						}
						got[m.Seq] = m.Subject + " " + string(m.Data)
						return nil
					})
				if err != nil {
					t.Fatal(err)
				}
				for seq, w := range want {
					if got[seq] != w {
						t.Errorf("seq %d: wrote %q, the cluster served %q", seq, got[seq], w)
					}
				}
				var resurrected []uint64
				for seq := range got {
					if _, ok := want[seq]; !ok {
						resurrected = append(resurrected, seq)
					}
				}
				if len(resurrected) > 0 {
					t.Errorf("wrote %d sequence(s) the cluster did not serve: %v", len(resurrected), resurrected)
				}
				// The deletes only the torn copy lost, and only where it is
				// read, are the ones its blocks still hold.
				if srv == "" || srv == o.Torn {
					if n := s.LeftOutCount(); n != uint64(o.Damage[0].TombstonesCut) {
						t.Errorf("left out %d sequence(s), want the %d whose tombstones were cut: %+v", n, o.Damage[0].TombstonesCut, s.LeftOut)
					}
				}
				if srv == o.Torn && (len(s.LeftOut) == 0 || !strings.Contains(s.LeftOut[0].Why, o.Torn+"'s index.db")) {
					t.Errorf("the torn replica's own index.db is not named first: %+v", s.LeftOut)
				}
			})
		}
	}
}

// TestExtractFlagsWhatTheClusterDidNotAgree: every server of an R3 stream
// killed at once under load (perturbed-crash-*), then restarted together
// on a copy: the real servers served a prefix of what their raft WALs
// hold (2.15.3: 1..1440 of 1472 in some WAL). Extract writes every
// sequence they served unflagged, and each one they did not serve only
// marked uncommitted.
func TestExtractFlagsWhatTheClusterDidNotAgree(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(perturbedDir, "perturbed-crash-*"))
	if len(dirs) == 0 {
		t.Fatal("no perturbed-crash fixture")
	}
	flagged := 0
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
		if err != nil {
			t.Fatal(err)
		}
		var o crashOracle
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		served := seqset.Of(o.Served...)
		var unflagged seqset.Set
		_, err = Extract(filepath.Join(dir, "bundle"), bundle.Limits{}, nil, SalvageOptions{Account: "$G", Stream: o.Stream},
			func(m *SalvagedMsg) error {
				switch {
				case m.Uncommitted && served.Contains(m.Seq):
					t.Errorf("%s: seq %d marked uncommitted, the restarted cluster served it", o.Name, m.Seq)
				case m.Uncommitted:
					flagged++
				case !served.Contains(m.Seq):
					t.Errorf("%s: seq %d written unflagged, the restarted cluster did not serve it", o.Name, m.Seq)
				default:
					unflagged.Add(m.Seq)
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if miss := served.Subtract(unflagged); len(miss) > 0 {
			t.Errorf("%s: served but not written: %v", o.Name, miss)
		}
	}
	if flagged == 0 {
		t.Error("no fixture has a WAL message past what its cluster agreed on: the flag is not tested")
	}
}
