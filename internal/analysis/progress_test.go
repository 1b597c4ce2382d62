package analysis

import (
	"github.com/jsforensics/jsforensics/internal/analysis/progress"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// progressLog records what a run tells its Progress.
type progressLog struct {
	stages []progressStage
}

type progressStage struct {
	name     string
	files    int
	bytes    int64
	advFiles []int
	advBytes []int64
}

func (p *progressLog) Stage(name string, files int, bytes int64) {
	p.stages = append(p.stages, progressStage{name: name, files: files, bytes: bytes})
}

func (p *progressLog) Advance(files int, bytes int64) {
	s := &p.stages[len(p.stages)-1]
	s.advFiles = append(s.advFiles, files)
	s.advBytes = append(s.advBytes, bytes)
}

// TestProgress runs a committed .tar.gz bundle and a committed folder bundle
// with a Progress: the stages come in order, within each the figures only
// grow and end at its totals, and the totals are the bundle's own (the
// store files and bytes on disk; the archive's size).
func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		path      string
		unpacking bool
	}{
		{bundlesDir + "/v2.12.1-archive/bundle.tar.gz", true},
		{bundlesDir + "/v2.10.22-per-server/bundle", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			var p progressLog
			if _, err := Run(tc.path, Options{Progress: &p}); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range p.stages {
				names = append(names, s.name)
			}
			want := []string{progress.StageStores, progress.StageCaptures, progress.StageRaft, progress.StageReplicas, progress.StageLogs}
			if tc.unpacking {
				want = append([]string{progress.StageUnpacking}, want...)
			}
			if len(names) != len(want) {
				t.Fatalf("stages %q, want %q", names, want)
			}
			for i := range want {
				if names[i] != want[i] {
					t.Fatalf("stages %q, want %q", names, want)
				}
			}
			for _, s := range p.stages {
				if len(s.advFiles) == 0 {
					if s.files != 0 || s.bytes != 0 {
						t.Errorf("stage %q: totals %d files, %d bytes, never advanced", s.name, s.files, s.bytes)
					}
					continue
				}
				for i := 1; i < len(s.advFiles); i++ {
					if s.advFiles[i] < s.advFiles[i-1] || s.advBytes[i] < s.advBytes[i-1] {
						t.Errorf("stage %q went back: %d files %d bytes after %d files %d bytes", s.name, s.advFiles[i], s.advBytes[i], s.advFiles[i-1], s.advBytes[i-1])
					}
				}
				last := len(s.advFiles) - 1
				if s.advFiles[last] != s.files || s.advBytes[last] != s.bytes {
					t.Errorf("stage %q ended at %d files %d bytes, totals %d files %d bytes", s.name, s.advFiles[last], s.advBytes[last], s.files, s.bytes)
				}
			}
			if tc.unpacking {
				fi, err := os.Stat(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				if u := p.stages[0]; u.bytes != fi.Size() || u.files != 0 {
					t.Errorf("unpacking totals %d files %d bytes, want 0 files and the archive's %d bytes", u.files, u.bytes, fi.Size())
				}
				return
			}
			// A folder bundle: the stores stage covers every file under the
			// stores' streams/ folders.
			var files int
			var bytes int64
			root := os.DirFS(tc.path)
			fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && strings.Contains(p, "/streams/") {
					fi, _ := d.Info()
					files++
					bytes += fi.Size()
				}
				return nil
			})
			st := p.stages[0]
			if files == 0 || st.files != files || st.bytes != bytes {
				t.Errorf("stores stage totals %d files %d bytes, the bundle's stream folders hold %d files %d bytes", st.files, st.bytes, files, bytes)
			}
		})
	}
}
