package analysis

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

func appendUnique[T comparable](list []T, s T) []T {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func namesFor(m *Model, ids []string) []string {
	var out []string
	for _, id := range ids {
		if n, ok := m.IDs[id]; ok {
			out = append(out, n+"("+id+")")
		} else {
			out = append(out, id)
		}
	}
	return out
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// maxRangesShown bounds the ranges listed in one finding's message; the
// finding's ranges field holds them all.
const maxRangesShown = 6

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// appendRange appends r to rs, merged with the last range when adjacent.
func appendRange(rs []report.Range, r report.Range) []report.Range {
	if n := len(rs); n > 0 && rs[n-1].Last+1 >= r.First {
		rs[n-1].Last = max(rs[n-1].Last, r.Last)
		return rs
	}
	return append(rs, r)
}

func rangesText(rs []report.Range) string {
	var parts []string
	for i, r := range rs {
		if i == maxRangesShown {
			parts = append(parts, fmt.Sprintf("and %d more ranges", len(rs)-i))
			break
		}
		if r.First == r.Last {
			parts = append(parts, fmt.Sprint(r.First))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r.First, r.Last))
		}
	}
	return strings.Join(parts, ", ")
}
