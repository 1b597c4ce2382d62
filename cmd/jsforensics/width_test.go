package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/jsforensics/jsforensics/report"
)

// TestTextFitsWidth renders every fixture's text report at 80, 100 and 120
// columns: no line is wider, no identifier (server name, peer id, stream
// name, file path) is cut, and every table cell is there, so no row and
// no column was dropped (a table too wide folds or stacks).
func TestTextFitsWidth(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		t.Run(strings.TrimPrefix(dir, bundles+"/"), func(t *testing.T) {
			js := runCLI(t, "analyze", dir, "--format", "json")
			saved := filepath.Join(t.TempDir(), "r.json")
			if err := os.WriteFile(saved, js, 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := report.ReadJSON(bytes.NewReader(js))
			if err != nil {
				t.Fatal(err)
			}
			unlimited := string(runCLI(t, "render", saved, "--width", "0"))
			ids := identifiers(rep)
			for _, width := range []int{80, 100, 120} {
				out := string(runCLI(t, "render", saved, "--width", strconv.Itoa(width)))
				for i, line := range strings.Split(out, "\n") {
					if w := text.RuneWidthWithoutEscSequences(line); w > width {
						t.Errorf("width %d: line %d is %d wide: %q", width, i+1, w, line)
					}
				}
				if strings.Contains(out, "≈") {
					t.Errorf("width %d: a cell was cut (≈)", width)
				}
				if a, b := strings.Count(out, "…"), strings.Count(unlimited, "…"); a > b {
					t.Errorf("width %d: %d ellipses, %d without a width: something was cut", width, a, b)
				}
				for _, id := range ids {
					if strings.Contains(unlimited, id) && !strings.Contains(out, id) {
						t.Errorf("width %d: identifier %q cut or lost", width, id)
					}
				}
				for _, tb := range report.Tables(rep) {
					for r, row := range tb.Rows {
						for c, cell := range row {
							for _, w := range strings.Fields(cell) {
								if !strings.Contains(out, w) {
									t.Errorf("width %d: %s row %d column %q: %q missing", width, tb.Title, r+1, tb.Columns[c].Header, w)
								}
							}
						}
					}
				}
			}
		})
	}
}

// identifiers are the names a reader matches across a report: servers,
// peer ids, streams, and the files findings and copies point at.
func identifiers(r *report.Report) []string {
	var ids []string
	for _, s := range r.Servers {
		ids = append(ids, s.Name, s.PeerID)
	}
	for _, st := range r.Streams {
		ids = append(ids, st.Name)
		for _, d := range st.OnDisk {
			ids = append(ids, d.Path)
		}
	}
	for _, g := range r.Groups {
		ids = append(ids, g.Name)
		for _, v := range g.Views {
			ids = append(ids, v.Peers...)
		}
	}
	for _, f := range r.Findings {
		ids = append(ids, f.File, f.Peer)
	}
	var out []string
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// TestWidthHelp: --width's help says its default in words, once, with no
// "(default -1)" after it; a width that is not a number is a usage error.
func TestWidthHelp(t *testing.T) {
	for _, cmd := range []string{"analyze", "render", "checks"} {
		help := string(runCLI(t, cmd, "--help"))
		var line string
		for _, l := range strings.Split(help, "\n") {
			if strings.Contains(l, "--width") {
				line = l
			}
		}
		if !strings.Contains(line, "0 for no limit (default: the terminal's width, or 100 off a terminal)") ||
			strings.Count(line, "default") != 1 || strings.Contains(line, "-1") {
			t.Errorf("%s --help: %q", cmd, line)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"checks", "--width", "wide"}, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "not a number of columns") {
		t.Errorf("--width wide: exit %d, %q", code, errb.String())
	}
	// Given, it is the width; not given, off a terminal, it is 100.
	if a, b := runCLI(t, "checks", "--width", "100"), runCLI(t, "checks"); !bytes.Equal(a, b) {
		t.Error("checks off a terminal is not checks --width 100")
	}
}
