package bundle

import (
	"reflect"
	"sort"
	"testing"
)

// The inventory (the walk, store sniffing, file sniffing) opens each file of
// every committed bundle at most once, and finds what it finds through a
// plain FS.
func TestInventoryOpensEachFileOnce(t *testing.T) {
	for _, fx := range fixtures(t) {
		for _, src := range fx.sources {
			b, err := Open(src, Limits{})
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			c := NewCountingFS(b.FS)
			again := &Bundle{Path: b.Path, Root: b.Root, Archive: b.Archive, FS: c}
			if err := again.inventory(Limits{}.withDefaults()); err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if !reflect.DeepEqual(again.Stores, b.Stores) || !reflect.DeepEqual(again.Logs, b.Logs) ||
				!reflect.DeepEqual(again.Captures, b.Captures) || !reflect.DeepEqual(again.AckLogs, b.AckLogs) {
				t.Errorf("%s: the inventory through a counting FS differs from Open's", src)
			}
			var twice []string
			for p, n := range c.Opens() {
				if n > 1 {
					twice = append(twice, p)
				}
			}
			sort.Strings(twice)
			if len(twice) > 0 {
				t.Errorf("%s: files opened more than once by the inventory: %v", src, twice)
			}
			if len(c.Opens()) == 0 {
				t.Errorf("%s: the inventory opened no file (logs and captures are sniffed)", src)
			}
			again.Close() // the logs its sniff holds open
			b.Close()
		}
	}
}
