package analysis

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// BenchmarkLogBundles analyzes the bundles named in JSF_BIGLOG_BUNDLES
// (comma-separated folders, e.g. written by `cd testdata/gen && go run .
// biglog -out DIR -size 300MB -debug`) end to end: load, checks, JSON
// report. It is skipped when the variable is unset: the logs are hundreds
// of megabytes and are not committed. Metrics: log MB per second of wall
// time, JSON report size, timeline entries, and the process's peak RSS so
// far (getrusage; run one bundle per process for a figure of its own), and
// log MB per second of CPU time.
func BenchmarkLogBundles(b *testing.B) {
	env := os.Getenv("JSF_BIGLOG_BUNDLES")
	if env == "" {
		b.Skip("JSF_BIGLOG_BUNDLES not set (see testdata/gen README, biglog)")
	}
	for _, dir := range strings.Split(env, ",") {
		size := logBytes(b, dir)
		b.Run(filepath.Base(dir), func(b *testing.B) {
			b.SetBytes(size)
			var out countingWriter
			var entries int
			var ru0 syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for range b.N {
				rep, err := Run(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				out = 0
				if err := report.WriteJSON(&out, rep); err != nil {
					b.Fatal(err)
				}
				entries = len(rep.Timeline)
			}
			b.ReportMetric(float64(out)/1e6, "report-MB")
			b.ReportMetric(float64(entries), "timeline-entries")
			var ru syscall.Rusage
			if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
				b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MiB")
				// On a shared machine wall time overstates the cost: the
				// log bytes per second of CPU time (both goroutines) too.
				cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
				if cpu > 0 {
					b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
				}
			}
		})
	}
}

// logBytes is the size of the .log files under dir.
func logBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".log") {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
