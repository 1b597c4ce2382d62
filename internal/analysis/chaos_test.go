package analysis

import (
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedEverywhere damages every file of copies of real bundles at
// once (bit flips, truncations, zeroed ranges, garbage appended): corrupt
// input is the normal input, so the analysis must still finish, report what
// it can, and never panic. A guard catching a panic shows up as a note,
// which fails the test too.
func TestDamagedEverywhere(t *testing.T) {
	for _, name := range []string{"v2.15.2-flat", "v2.10.22-incident-phantom-peers", "membership-v2.12.1"} {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(name, func(t *testing.T) {
				dir := copyTree(t, filepath.Join(bundlesDir, name, "bundle"))
				rng := rand.New(rand.NewSource(seed))
				err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := os.ReadFile(p)
					if err != nil || len(b) == 0 {
						return err
					}
					switch rng.Intn(5) {
					case 0: // a few bit flips
						for i := 0; i < 1+len(b)/500; i++ {
							b[rng.Intn(len(b))] ^= 1 << rng.Intn(8)
						}
					case 1: // torn
						b = b[:rng.Intn(len(b))]
					case 2: // zeroed range
						i := rng.Intn(len(b))
						for j := i; j < len(b) && j < i+64; j++ {
							b[j] = 0
						}
					case 3: // garbage appended
						g := make([]byte, rng.Intn(300))
						rng.Read(g)
						b = append(b, g...)
					}
					return os.WriteFile(p, b, 0o644)
				})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := Run(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range rep.Notes {
					if strings.Contains(n, "internal error") || strings.Contains(n, "not run") {
						t.Errorf("seed %d: %s", seed, n)
					}
				}
				if len(rep.Servers) == 0 {
					t.Errorf("seed %d: no server found", seed)
				}
			})
		}
	}
}
