package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSharedRemedyPrintedOnce: three findings of one cause whose remedies
// differ only in their commands (one removal per corrupt id) print that
// remedy once in the text and Markdown reports, under the first of them,
// with every command of the three and the ids it serves; the others point
// to it. A finding of the cause with a remedy of other prose, and a
// finding outside the cause with the same remedy, keep their own. The
// JSON keeps every finding's remedy as it was.
func TestSharedRemedyPrintedOnce(t *testing.T) {
	remove := func(id string) string {
		return "What this destroys: the removed id's entries.\nSave first: copy the meta group folder out.\nRemove each corrupt id:\n  nats server cluster peer-remove -f " + id + "\nCheck: the meta group is led."
	}
	r := &Report{ToolVersion: "test", Bundle: "b",
		Findings: []Finding{
			{Code: "peer-id-corrupt", Severity: Critical, Group: "_meta_", Peer: "aaaaaaa1", Message: "corrupt 1", Remedy: remove("aaaaaaa1")},
			{Code: "peer-id-corrupt", Severity: Critical, Group: "_meta_", Peer: "aaaaaaa2", Message: "corrupt 2", Remedy: remove("aaaaaaa2")},
			{Code: "quorum-unreachable", Severity: Critical, Group: "_meta_", Message: "no quorum", Remedy: "Add a temporary server.\n  nats-server -c temp.conf"},
			{Code: "peer-id-corrupt", Severity: Critical, Group: "_meta_", Peer: "aaaaaaa3", Message: "corrupt 3", Remedy: remove("aaaaaaa3")},
			{Code: "peer-id-corrupt", Severity: Warning, Group: "S-R3F-x", Peer: "aaaaaaa4", Message: "corrupt 4, no cause", Remedy: remove("aaaaaaa4")},
		},
		Diagnosis: []Cause{{Summary: "corrupt ids", Severity: Critical, Findings: []int{0, 1, 2, 3}}},
	}
	var text, md bytes.Buffer
	if err := WriteTextWith(&text, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdownWith(&md, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, out := range []struct{ name, s, lead, pointer string }{
		{"text", text.String(), "remedy for #0, #1, #3: What this destroys", "remedy: the one under #0, for #0, #1, #3"},
		{"markdown", md.String(), "Remedy for #0, #1, #3:", "Remedy: the one under #0, for #0, #1, #3."},
	} {
		s := out.s
		// The cause's three and the fourth outside it: two printings.
		if n := strings.Count(s, "What this destroys: the removed id"); n != 2 {
			t.Errorf("%s: the removal's remedy printed %d times, want 2 (once for the cause, once for #4):\n%s", out.name, n, s)
		}
		if n := strings.Count(s, out.lead); n != 1 {
			t.Errorf("%s: %q %d times, want once", out.name, out.lead, n)
		}
		if n := strings.Count(s, out.pointer); n != 2 {
			t.Errorf("%s: %q %d times, want under #1 and #3", out.name, out.pointer, n)
		}
		for _, id := range []string{"aaaaaaa1", "aaaaaaa2", "aaaaaaa3", "aaaaaaa4"} {
			if n := strings.Count(s, "peer-remove -f "+id); n != 1 {
				t.Errorf("%s: the removal of %s printed %d times, want once", out.name, id, n)
			}
		}
		// The commands of the three in one block, in the findings' order.
		i1, i2, i3 := strings.Index(s, "-f aaaaaaa1"), strings.Index(s, "-f aaaaaaa2"), strings.Index(s, "-f aaaaaaa3")
		if !(i1 < i2 && i2 < i3) || strings.Contains(s[i1:i3], "Check:") {
			t.Errorf("%s: the cause's removals are not one block in order:\n%s", out.name, s)
		}
		if !strings.Contains(s, "nats-server -c temp.conf") || strings.Count(s, "Add a temporary server.") != 1 {
			t.Errorf("%s: quorum-unreachable's own remedy", out.name)
		}
		for i := range r.Findings {
			if !strings.Contains(s, "#"+string(rune('0'+i))+"  [") && !strings.Contains(s, "#"+string(rune('0'+i))+"  \\[") {
				t.Errorf("%s: no heading carries #%d", out.name, i)
			}
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for i, f := range back.Findings {
		if f.Remedy != r.Findings[i].Remedy {
			t.Errorf("JSON finding %d: remedy %q, want its own %q", i, f.Remedy, r.Findings[i].Remedy)
		}
	}
}
