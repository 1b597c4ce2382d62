package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/analysis"
)

// newChecksCmd lists the registered checks, as natscli's `audit checks` does:
// code, usual severity, what raises it, and its settings with defaults.
func newChecksCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	width := -1
	c := &cobra.Command{
		Use:   "checks",
		Short: "List the checks analyze runs: codes, severities, what raises each, settings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkWidth(width); err != nil {
				return err
			}
			if asJSON {
				return writeChecksJSON(stdout)
			}
			if width == -1 {
				width = defaultWidth
				if t := terminalOf(stdout); t.is && t.width > 0 {
					width = t.width
				}
			}
			return writeChecksText(stdout, checkList(), width)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the checks as a JSON array: code, severity, description, settings (key as --set takes it, default, unit, description)")
	addWidthFlag(c, &width, "wrap the list to")
	return c
}

type checkJSON struct {
	Code        string        `json:"code"`
	NatscliCode string        `json:"natscli_code,omitempty"`
	Severity    string        `json:"severity"`
	Description string        `json:"description"`
	Settings    []settingJSON `json:"settings"`
}

type settingJSON struct {
	Key         string  `json:"key"`
	Default     float64 `json:"default"`
	Unit        string  `json:"unit"`
	Description string  `json:"description"`
}

// checkList is every registered check as checks prints it, settings under
// the key --set takes.
func checkList() []checkJSON {
	out := make([]checkJSON, 0, len(analysis.Checks))
	for _, c := range analysis.Checks {
		cj := checkJSON{Code: c.Code, NatscliCode: c.NatscliCode, Severity: string(c.Severity), Description: c.Description, Settings: []settingJSON{}}
		for _, s := range c.Settings {
			cj.Settings = append(cj.Settings, settingJSON{Key: c.Code + "." + s.Key, Default: s.Default, Unit: s.Unit, Description: s.Description})
		}
		out = append(out, cj)
	}
	return out
}

// writeChecksJSON prints the checks as one JSON array.
func writeChecksJSON(w io.Writer) error {
	b, err := json.MarshalIndent(checkList(), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// minDescWidth is the narrowest description column beside the code and
// severity: on a narrower terminal each description goes under its code.
const minDescWidth = 40

// writeChecksText prints the checks as a table of code, severity and what
// raises it, each setting under its check, wrapped to width columns (0: no
// limit). Continuation lines are indented under their column; when the
// description column would be narrower than minDescWidth, descriptions go
// on lines of their own, indented under the code.
func writeChecksText(w io.Writer, checks []checkJSON, width int) error {
	codeW, sevW := len("CODE"), len("SEVERITY")
	for _, c := range checks {
		codeW = max(codeW, utf8.RuneCountInString(c.Code))
		sevW = max(sevW, utf8.RuneCountInString(c.Severity))
	}
	indent := codeW + 2 + sevW + 2
	stacked := width > 0 && width-indent < minDescWidth
	if stacked {
		indent = 4
	}
	descW := 0 // no limit
	if width > 0 {
		descW = width - indent
	}
	bw := bufio.NewWriter(w)
	pad := strings.Repeat(" ", indent)
	if stacked {
		fmt.Fprintf(bw, "%-*s  %s\n%sRAISED WHEN\n", codeW, "CODE", "SEVERITY", pad)
	} else {
		fmt.Fprintf(bw, "%-*s  %-*s  %s\n", codeW, "CODE", sevW, "SEVERITY", "RAISED WHEN")
	}
	for _, c := range checks {
		for i, l := range wrapWords(strings.Fields(c.Description), descW, descW) {
			switch {
			case i == 0 && stacked:
				fmt.Fprintf(bw, "%-*s  %s\n%s%s\n", codeW, c.Code, c.Severity, pad, l)
			case i == 0:
				fmt.Fprintf(bw, "%-*s  %-*s  %s\n", codeW, c.Code, sevW, c.Severity, l)
			default:
				fmt.Fprintf(bw, "%s%s\n", pad, l)
			}
		}
		for _, s := range c.Settings {
			// "--set key=value" is one word: a line never ends on --set.
			words := append([]string{"--set " + s.Key + "=" + strconv.FormatFloat(s.Default, 'f', -1, 64)},
				strings.Fields("("+s.Unit+"): "+s.Description)...)
			// Settings stand two columns in, their continuations four.
			for i, l := range wrapWords(words, descW-2, descW-4) {
				if i == 0 {
					fmt.Fprintf(bw, "%s  %s\n", pad, l)
				} else {
					fmt.Fprintf(bw, "%s    %s\n", pad, l)
				}
			}
		}
	}
	return bw.Flush()
}

// wrapWords lays words out, a space between, in lines of at most first
// columns, then rest; a word longer than a line stands alone on it, whole
// (a flag or a key is never cut). A width of 0 or less is no limit.
func wrapWords(words []string, first, rest int) []string {
	if len(words) == 0 {
		return []string{""}
	}
	if first <= 0 {
		return []string{strings.Join(words, " ")}
	}
	var lines []string
	line, lineW, limit := words[0], utf8.RuneCountInString(words[0]), first
	for _, word := range words[1:] {
		ww := utf8.RuneCountInString(word)
		if lineW+1+ww > limit {
			lines = append(lines, line)
			line, lineW, limit = word, ww, rest
			continue
		}
		line += " " + word
		lineW += 1 + ww
	}
	return append(lines, line)
}

// parseSettings turns --set code.key=value pairs into numbers; which keys
// exist is analysis' to say.
func parseSettings(in map[string]string) (map[string]float64, error) {
	units := map[string]string{}
	for _, c := range analysis.Checks {
		for _, s := range c.Settings {
			units[c.Code+"."+s.Key] = s.Unit
		}
	}
	out := map[string]float64{}
	for k, v := range in {
		unit, ok := units[k]
		if !ok {
			return nil, fmt.Errorf("no check setting %q (jsforensics checks lists them)", k)
		}
		f, err := parseSetting(k, unit, v)
		if err != nil {
			return nil, err
		}
		out[k] = f
	}
	if err := analysis.CheckSettings(out); err != nil {
		return nil, err
	}
	return out, nil
}
