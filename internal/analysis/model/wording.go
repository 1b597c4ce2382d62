package model

import (
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

func AppendUnique[T comparable](list []T, s T) []T {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func NamesFor(m *Model, ids []string) []string {
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

func DashIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// maxRangesShown bounds the ranges listed in one finding's message; the
// finding's ranges field holds them all.
const MaxRangesShown = 6

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rangesText lists rs for a finding's message: at most maxRangesShown
// ranges, then how many more.
func RangesText(rs []report.Range) string { return seqset.Format(rs, MaxRangesShown) }
