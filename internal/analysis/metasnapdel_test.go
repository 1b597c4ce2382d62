package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// metaSnapDelOracle is oracle.json of perturbed-metasnapdel-* (testdata/gen
// scen_metasnapdel.go MetaSnapDelOracle), the parts used here.
type metaSnapDelOracle struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	Mode          string   `json:"mode"`
	RestartedFrom string   `json:"restarted_from"`
	Account       string   `json:"account"`
	Kept          []string `json:"kept"`
	DeletedBefore []string `json:"deleted_before"`
	DeletedAfter  []string `json:"deleted_after"`
	Damaged       []struct {
		Server string `json:"server"`
	} `json:"damaged"`
	Restart []struct {
		Server        string   `json:"server"`
		Started       bool     `json:"started"`
		FoldersBefore []string `json:"folders_before"`
		FoldersAfter  []string `json:"folders_after"`
	} `json:"restart"`
	LostInRestart []string `json:"lost_in_restart"`
}

// TestMetaSnapDelNoAssetLost: streams deleted through the API before a
// meta snapshot at one index on every server (EARLY_*) and after it
// (LATE), then the snapshot of one, two or all servers failing its
// checksum, on 2.11.17, 2.12.15 and 2.15.3 (real servers: testdata/gen
// scen_metasnapdel.go). In the damaged state and in the state the real
// servers' start on it left (-restarted), no deleted stream is reported
// lost; a kept stream the start really lost (no server held it after) is
// reported lost, critical; and every copy a server deleted at that start
// (the orphan cleanup) was foretold by a critical orphan-risk on the
// damaged state.
func TestMetaSnapDelNoAssetLost(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(perturbedDir, "*", "oracle.json"))
	versions, states := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o metaSnapDelOracle
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if o.Mode != "metasnapdel" {
			continue
		}
		versions[o.Version] = true
		state := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(o.Name, "perturbed-metasnapdel-"), "-restarted"), "-"+o.Version)
		if o.RestartedFrom != "" {
			state += "-restarted"
		}
		states[state] = true
		t.Run(o.Name, func(t *testing.T) {
			rep, err := Run(filepath.Join(filepath.Dir(f), "bundle"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			lost := map[string]report.Finding{}
			for _, fd := range rep.Findings {
				if fd.Code == string(report.CodeAssetLost) && fd.Consumer == "" {
					lost[fd.Stream] = fd
				}
			}
			for _, d := range append(slices.Clone(o.DeletedBefore), o.DeletedAfter...) {
				if fd, ok := lost[d]; ok {
					t.Errorf("%s, deleted through the API, reported lost: %s", d, fd.Message)
				}
			}
			if o.RestartedFrom != "" {
				for _, k := range o.LostInRestart {
					if fd, ok := lost[k]; !ok || fd.Severity != report.Critical {
						t.Errorf("%s: no server held it after the start, yet no critical asset-lost (%+v)", k, fd)
					}
				}
				return
			}
			for _, r := range o.Restart {
				for _, folder := range r.FoldersBefore {
					if slices.Contains(r.FoldersAfter, folder) {
						continue
					}
					stream := strings.TrimPrefix(folder, o.Account+"/")
					if !slices.ContainsFunc(rep.Findings, func(fd report.Finding) bool {
						return fd.Code == string(report.CodeOrphanRisk) && fd.Server == r.Server && fd.Stream == stream && fd.Severity == report.Critical
					}) {
						t.Errorf("%s deleted its copy of %s at the start, no critical orphan-risk foretold it", r.Server, stream)
					}
				}
			}
		})
	}
	for _, v := range []string{"v2.11.17", "v2.12.15", "v2.15.3"} {
		if !versions[v] {
			t.Errorf("no perturbed-metasnapdel fixture of %s", v)
		}
	}
	for _, s := range []string{"one", "two", "all", "one-restarted", "two-restarted", "all-restarted"} {
		if !states[s] {
			t.Errorf("no perturbed-metasnapdel fixture of the %s state", s)
		}
	}
	// Where the cluster really lost a stream to a dropped meta snapshot
	// (the orphan cleanup that followed it), asset-lost still says so.
	rep := analyze(t, filepath.Join(bundlesDir, "metasnap-v2.12.1-restarted", "bundle"))
	if !slices.ContainsFunc(rep.Findings, func(fd report.Finding) bool {
		return fd.Code == string(report.CodeAssetLost) && fd.Stream == "LOCAL_0" && fd.Consumer == "" && fd.Severity == report.Critical
	}) {
		t.Error("metasnap-v2.12.1-restarted: LOCAL_0, deleted by the orphan cleanup after the dropped snapshot, not reported lost")
	}
}
