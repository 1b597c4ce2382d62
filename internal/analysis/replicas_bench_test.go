package analysis

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkReplicaComparison analyzes the bundle at $JSF_REPLICA_BUNDLE
// (made on demand by `cd testdata/gen && go run . replicas -out DIR`; the
// bundle is DIR/diverged, one folder per server): "three" is the whole
// bundle, every copy of the R3 stream compared message by message; "one-at-
// a-time" analyzes each server's folder alone, in turn. The diverging
// sequence must be reported with the servers on each side. peak-MiB is the
// process's peak RSS so far: run one sub-benchmark per process to read it.
func BenchmarkReplicaComparison(b *testing.B) {
	dir := os.Getenv("JSF_REPLICA_BUNDLE")
	if dir == "" {
		b.Skip("JSF_REPLICA_BUNDLE is not set (see testdata/gen README, `replicas`)")
	}
	b.Run("three", func(b *testing.B) {
		for b.Loop() {
			rep, err := Run(dir, Options{ToolVersion: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			found := false
			for _, f := range rep.Findings {
				if f.Code == "replica-divergence" {
					found = true
					b.Logf("%s > %s: %s; %s", f.Account, f.Stream, strings.Join(f.Evidence, "; "), f.Message)
				}
			}
			if !found {
				b.Fatal("no replica-divergence reported")
			}
		}
		reportPeak(b)
	})
	b.Run("one-at-a-time", func(b *testing.B) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			for _, e := range ents {
				if !e.IsDir() {
					continue
				}
				if _, err := Run(filepath.Join(dir, e.Name()), Options{ToolVersion: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportPeak(b)
	})
}

// reportPeak reports the process's peak resident set (VmHWM, Linux).
func reportPeak(b *testing.B) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				b.ReportMetric(kb/1024, "peak-MiB")
			}
		}
	}
}
