package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1GiB": 1 << 30, "512MiB": 512 << 20, "1gib": 1 << 30, "100MB": 100e6, "64k": 64 << 10,
		"1.5GiB": 3 << 29, "4096": 4096, "0": 0, " 2 GB ": 2e9, "10b": 10,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1XB", "GiB", "1e400", "NaN"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

func TestParseSetting(t *testing.T) {
	for _, tc := range []struct {
		unit, in string
		want     float64
	}{{"seconds", "30s", 30}, {"seconds", "2m", 120}, {"seconds", "45", 45}, {"seconds", "1.5", 1.5}, {"bits", "3", 3}, {"findings", "0", 0}} {
		if got, err := parseSetting("k", tc.unit, tc.in); err != nil || got != tc.want {
			t.Errorf("%s %q: %v, %v; want %v", tc.unit, tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ unit, in string }{{"bits", "-5"}, {"bits", "2.5"}, {"seconds", "-3s"}, {"seconds", "soon"}, {"findings", "x"}} {
		if _, err := parseSetting("k", tc.unit, tc.in); err == nil {
			t.Errorf("%s %q accepted", tc.unit, tc.in)
		}
	}
}

// TestHumanFlags: sizes and durations in their human forms on the command
// line; out-of-range settings refused.
func TestHumanFlags(t *testing.T) {
	b := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	for _, args := range [][]string{
		{"--max-entry", "1GiB", "--max-unpacked", "100GiB", "--max-spill", "256MiB"},
		{"--set", "meta-no-leader.persist=30s"},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"analyze", b}, args...), &out, &errb); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"analyze", b, "--set", "peer-id-corrupt.max_bits=-5"}, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "never negative") {
		t.Errorf("negative max_bits: exit %d: %s", code, errb.String())
	}
}
