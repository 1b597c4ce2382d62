package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// byteUnits are the size suffixes flags take: binary (KiB, K) and decimal
// (KB), case-insensitive; none means bytes.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize reads "1GiB", "512MB", "64k" or a number of bytes.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a size (bytes, or with KiB, MiB, GiB, KB, MB, GB)", s)
	}
	v := f * float64(mult)
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v), nil
}

// sizeValue is an int64 flag of bytes that takes parseSize's forms.
type sizeValue struct{ p *int64 }

func (v sizeValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatInt(*v.p, 10)
}

func (v sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

func (sizeValue) Type() string { return "size" }

// parseSetting reads a check setting's value in its unit: a duration
// ("30s", "2m") or a number of seconds for seconds, a whole number for
// counts; never negative.
func parseSetting(key, unit, s string) (float64, error) {
	t := strings.TrimSpace(s)
	if unit == "seconds" {
		if d, err := time.ParseDuration(t); err == nil {
			if d < 0 {
				return 0, fmt.Errorf("--set %s=%s: a duration is not negative", key, s)
			}
			return d.Seconds(), nil
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		if unit == "seconds" {
			return 0, fmt.Errorf("--set %s=%s: not a duration (30s, 2m) nor a number of seconds", key, s)
		}
		return 0, fmt.Errorf("--set %s=%s: not a number", key, s)
	}
	if f < 0 {
		return 0, fmt.Errorf("--set %s=%s: %s is never negative", key, s, unit)
	}
	if unit != "seconds" && f != math.Trunc(f) {
		return 0, fmt.Errorf("--set %s=%s: a whole number of %s", key, s, unit)
	}
	return f, nil
}
