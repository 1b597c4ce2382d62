package report

import (
	"fmt"
	"strings"
)

// FirstOf is items cut to the first n, with "and K more" as one more item
// where there were more: how a list a reader sees stays bounded whatever
// the bundle holds. items is not changed.
func FirstOf(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(append([]string(nil), items[:n]...), fmt.Sprintf("and %d more", len(items)-n))
}

// JoinFirst is the first n of items for a sentence: "a, b and 3 more".
func JoinFirst(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
