package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/releases"
)

// The version rules that place 2.11 and 2.13 (README versions table, rows
// metasnap and diskfull): 2.11.17 is on the side its run showed, 2.13 and
// the unread 2.12 patches cannot be told.
func TestVersionLinesPlaced(t *testing.T) {
	for v, want := range map[string][2]bool{
		"2.10.22": {false, true}, "2.11.17": {false, true}, "2.12.1": {false, true}, "2.12.15": {false, true},
		"2.13.0": {false, false}, "2.14.10": {true, true}, "2.15.3": {true, true}, "": {false, false},
	} {
		if y, k := releases.RefusesCorruptMetaSnapshot(v); y != want[0] || k != want[1] {
			t.Errorf("refusesCorruptMetaSnapshot(%q) = %v, %v; want %v", v, y, k, want)
		}
	}
	for v, want := range map[string][2]bool{
		"2.10.27": {true, true}, "2.11.17": {true, true}, "2.12.4": {true, true}, "2.12.9": {false, false},
		"2.12.15": {false, true}, "2.13.0": {false, false}, "2.14.10": {false, true}, "2.15.3": {false, true}, "2.11.18": {false, false},
	} {
		if y, k := releases.DisableDeletesMeta(v); y != want[0] || k != want[1] {
			t.Errorf("disableDeletesMeta(%q) = %v, %v; want %v", v, y, k, want)
		}
	}
}

// TestKeepsPriorLastSeqByRelease: the releases whose filestore keeps
// index.db's prior last sequence unconditionally (filestore.go
// newFileStoreWithCreated as read in v2.11.0-v2.11.17: the fs.ld condition
// goes in 2.11.4); acked-lost-v2.11.17 is the run on that side.
func TestKeepsPriorLastSeqByRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"2.10.27": false, "2.11.0": false, "2.11.3": false, "2.11.4": true,
		"2.11.17": true, "2.11.18": false, "2.12.15": false, "2.15.3": false,
	} {
		if got, _ := releases.KeepsPriorLastSeq(v); got != want {
			t.Errorf("%s: keeps prior last seq %v, want %v", v, got, want)
		}
	}
}
