package analysis

import (
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// nameAccounts gives every finding about an account the servers name by
// public key (operator mode) the name the bundle gives it (its JWT's name
// claim, or /jsz), in AccountName, and writes "NAME (KEY)" where its
// message and evidence name the key alone, so that operator mode reads as
// config accounts do. A key inside a quoted log line, a path or brackets is
// left as written.
func nameAccounts(m *model.Model, findings []report.Finding) {
	if len(m.Accounts) == 0 {
		return
	}
	for i := range findings {
		f := &findings[i]
		if f.AccountName == "" && f.Account != "" {
			f.AccountName = m.AccountName(f.Account)
		}
		f.Message = labelAccounts(m, f.Message)
		for j := range f.Evidence {
			f.Evidence[j] = labelAccounts(m, f.Evidence[j])
		}
	}
}

// labelAccounts writes "NAME (KEY)" for each named account's key standing
// alone in s.
func labelAccounts(m *model.Model, s string) string {
	for key, a := range m.Accounts {
		if a.Name == "" || a.Name == key || !strings.Contains(s, key) {
			continue
		}
		label := model.AccountLabel(key, a.Name)
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, key)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			before, after := rest[:i], rest[i+len(key):]
			b.WriteString(before)
			prefixed := strings.HasSuffix(before, a.Name+" (")
			if prefixed || quotedAt(before, after) {
				b.WriteString(key)
			} else {
				b.WriteString(label)
			}
			rest = after
		}
		s = b.String()
	}
	return s
}

// quotedAt says whether a key between before and after stands in a path,
// brackets or quotes (a log line or file name as written).
func quotedAt(before, after string) bool {
	const marks = "/\\[]\"'`"
	if before != "" && strings.ContainsRune(marks, rune(before[len(before)-1])) {
		return true
	}
	if after != "" && (strings.ContainsRune(marks, rune(after[0])) || strings.HasPrefix(after, ".jwt")) {
		return true
	}
	return false
}
