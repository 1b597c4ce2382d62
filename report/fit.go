package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
)

// The text report fits its width here: prose wraps at spaces, a table too
// wide folds (its cells wrap at spaces) or, when even its longest words do
// not fit side by side, stacks (one block a row, a line a column). Nothing
// is cut: a line breaks only at a space, never inside an identifier, and
// a word wider than the width stays whole on a line of its own.

// textWidth is the display width of s, ANSI colours left out.
func textWidth(s string) int { return text.RuneWidthWithoutEscSequences(s) }

// words splits s at the spaces where a line may break. A space before a
// short "(…)" does not break: "nats-3 (bkCGheKT)" stays on one line.
func words(s string) []string {
	parts := strings.Split(s, " ")
	var out []string
	for _, p := range parts {
		if p == "" {
			if len(out) > 0 {
				out[len(out)-1] += " "
			}
			continue
		}
		if len(out) > 0 && strings.HasPrefix(p, "(") && len(p) <= 14 && !strings.HasSuffix(out[len(out)-1], " ") {
			out[len(out)-1] += " " + p
			continue
		}
		out = append(out, strings.TrimSuffix(p, " "))
	}
	return out
}

// wrap breaks each line of s at spaces into lines of at most width
// columns; width 0 or below leaves s as it is.
func wrap(s string, width int) []string { return wrapHanging(s, width, width) }

// wrapHanging is wrap with the first line first columns wide and the
// others rest. A word wider than rest (an absolute path in a log line) is
// the one thing broken: after a '/' where it has one, else at rest.
func wrapHanging(s string, first, rest int) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		width := first
		if len(out) > 0 {
			width = rest
		}
		if width <= 0 || textWidth(line) <= width {
			out = append(out, line)
			continue
		}
		cur, curW := "", 0
		for _, word := range words(line) {
			for k, w := range splitLong(word, rest) {
				ww, sep := textWidth(w), 1
				if k > 0 {
					sep = 0 // a piece of a broken word: no space before it
				}
				switch {
				case cur == "":
					cur, curW = w, ww
				case curW+sep+ww <= width:
					cur, curW = cur+strings.Repeat(" ", sep)+w, curW+sep+ww
				default:
					out = append(out, cur)
					cur, curW = w, ww
					width = rest
				}
			}
		}
		out = append(out, cur)
	}
	return out
}

// splitLong cuts a word wider than width into pieces of at most width,
// each ending in a '/' where the word has one in reach.
func splitLong(w string, width int) []string {
	if width <= 0 || textWidth(w) <= width {
		return []string{w}
	}
	var out []string
	for textWidth(w) > width {
		r := []rune(w)
		cut := min(width, len(r))
		if i := strings.LastIndex(string(r[:cut]), "/"); i > 0 {
			cut = len([]rune(string(r[:cut])[:i+1]))
		}
		out = append(out, string(r[:cut]))
		w = string(r[cut:])
	}
	return append(out, w)
}

// longestWord is the width of the widest word of s.
func longestWord(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		for _, w := range words(line) {
			n = max(n, textWidth(w))
		}
	}
	return n
}

// widest is the width of the widest line of s.
func widest(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, textWidth(line))
	}
	return n
}

// para writes s wrapped at o.Width: the first line after first, the others
// after rest (a hanging indent).
func (o TextOptions) para(w io.Writer, first, rest, s string) {
	fw, rw := 0, 0
	if o.Width > 0 {
		fw, rw = max(1, o.Width-textWidth(first)), max(1, o.Width-textWidth(rest))
	}
	for i, l := range wrapHanging(s, fw, rw) {
		p := rest
		if i == 0 {
			p = first
		}
		fmt.Fprintf(w, "%s%s\n", p, l)
	}
}

// command writes a shell command at indent, broken where it is too wide
// at spaces outside quotes, each broken line ending in " \" so that it
// still pastes into a shell as one command. A trailing comment ("# or:
// …") goes on lines of its own, each a comment: a backslash does not
// continue a comment, so the rest would run as a command.
func (o TextOptions) command(w io.Writer, indent, cmd string) {
	if o.Width <= 0 || textWidth(indent)+textWidth(cmd) <= o.Width {
		fmt.Fprintf(w, "%s%s\n", indent, cmd)
		return
	}
	var parts []string
	var cur strings.Builder
	comment := ""
	quote := rune(0)
	for i, c := range cmd {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == 0 && c == '#' && (i == 0 || cmd[i-1] == ' '):
			comment = cmd[i:]
		case quote == 0 && c == ' ':
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		if comment != "" {
			break
		}
		cur.WriteRune(c)
	}
	parts = append(parts, cur.String())
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if comment != "" {
		defer o.para(w, indent, indent+"# ", comment)
	}
	avail := o.Width - textWidth(indent) - 2 // room for " \"
	line := ""
	for _, p := range parts {
		if line != "" && textWidth(line)+1+textWidth(p) > avail {
			fmt.Fprintf(w, "%s%s \\\n", indent, line)
			line = "    " + p
			continue
		}
		if line == "" {
			line = p
		} else {
			line += " " + p
		}
	}
	fmt.Fprintf(w, "%s%s\n", indent, line)
}

// tableBorder is what the rounded box adds to the widths of n columns:
// a bar and a space before each cell, a space after, and the last bar;
// compact, the space before goes.
func tableBorder(n int, compact bool) int {
	if compact {
		return 2*n + 1
	}
	return 3*n + 1
}

// table lays t out with go-pretty in natscli's style (rounded box, title
// above, headers as written); key columns are left blank where they
// repeat. Too wide for o.Width, it folds; too wide to fold, it stacks.
func (o TextOptions) table(w io.Writer, t *Table) {
	if len(t.Rows) == 0 {
		fmt.Fprintf(w, "%s: none\n", t.Title)
		return
	}
	rows := blankRepeatedKeys(t)
	n := len(t.Columns)
	natural, least := make([]int, n), make([]int, n)
	for i, c := range t.Columns {
		natural[i], least[i] = widest(c.Header), longestWord(c.Header)
		for _, r := range rows {
			natural[i], least[i] = max(natural[i], widest(r[i])), max(least[i], longestWord(r[i]))
		}
	}
	sum := func(ws []int) int {
		s := 0
		for _, v := range ws {
			s += v
		}
		return s
	}
	avail, tight := o.Width-tableBorder(n, false), o.Width-tableBorder(n, true)
	switch {
	case o.Width <= 0 || sum(natural) <= avail:
		o.boxed(w, t, rows, nil, false)
	case sum(least) <= avail:
		o.boxed(w, t, rows, foldWidths(natural, least, avail), false)
	case sum(least) <= tight:
		// Without the space before each cell the words fit.
		o.boxed(w, t, rows, foldWidths(natural, least, tight), true)
	default:
		o.stacked(w, t)
	}
}

// foldWidths shares avail columns among the table's columns: each gets at
// least its longest word, then the narrow ones their whole width, the
// rest an equal share of what remains (max-min fairness).
func foldWidths(natural, least []int, avail int) []int {
	ws := append([]int(nil), least...)
	extra := avail
	for _, v := range least {
		extra -= v
	}
	idx := make([]int, len(ws))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return natural[idx[a]]-least[idx[a]] < natural[idx[b]]-least[idx[b]] })
	for k, i := range idx {
		share := extra / (len(idx) - k)
		give := min(natural[i]-least[i], share)
		ws[i] += give
		extra -= give
	}
	return ws
}

// blankRepeatedKeys returns t's rows with the key columns blank where a
// row repeats the row above in every key column.
func blankRepeatedKeys(t *Table) [][]string {
	out := make([][]string, len(t.Rows))
	var prev []string
	for r, row := range t.Rows {
		repeats := prev != nil
		for i, c := range t.Columns {
			if repeats && c.Key && row[i] != prev[i] {
				repeats = false
			}
		}
		cells := append([]string(nil), row...)
		for i := range cells {
			if repeats && t.Columns[i].Key {
				cells[i] = ""
			}
		}
		out[r] = cells
		prev = row
	}
	return out
}

// boxed renders rows in the rounded box; widths, when given, are the
// columns' widths, and cells are wrapped to them at spaces beforehand;
// compact leaves out the space before each cell.
func (o TextOptions) boxed(w io.Writer, t *Table, rows [][]string, widths []int, compact bool) {
	tw := table.NewWriter()
	tw.SetStyle(table.StyleRounded)
	if compact {
		tw.Style().Box.PaddingLeft = ""
	}
	tw.Style().Title.Align = text.AlignCenter
	tw.Style().Format.Header = text.FormatDefault
	tw.SetTitle(t.Title)
	if o.Color {
		tw.Style().Color.Header = text.Colors{text.Bold}
		tw.Style().Color.Border = text.Colors{text.Faint}
		tw.Style().Color.Separator = text.Colors{text.Faint}
	}
	fit := func(i int, s string) string {
		if widths == nil {
			return s
		}
		return strings.Join(wrap(s, widths[i]), "\n")
	}
	var cfg []table.ColumnConfig
	header := make(table.Row, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = fit(i, c.Header)
		cc := table.ColumnConfig{Number: i + 1}
		if c.Numeric {
			cc.Align, cc.AlignHeader = text.AlignRight, text.AlignRight
		}
		cfg = append(cfg, cc)
	}
	tw.SetColumnConfigs(cfg)
	tw.AppendHeader(header)
	for _, row := range rows {
		cells := make(table.Row, len(row))
		for i, v := range row {
			cells[i] = fit(i, v)
		}
		tw.AppendRow(cells)
	}
	fmt.Fprintln(w, tw.Render())
}

// stacked writes each row as a block: a rule with the row's number and
// first cell, then its other non-empty cells as "header: value" items,
// wrapped at the width.
func (o TextOptions) stacked(w io.Writer, t *Table) {
	fmt.Fprintf(w, "%s (%d rows, a block a row)\n", o.bold(t.Title), len(t.Rows))
	for r, row := range t.Rows {
		o.para(w, fmt.Sprintf("── %d/%d ", r+1, len(t.Rows)), "   ", t.Columns[0].Header+": "+row[0])
		var items []string
		for i, v := range row[1:] {
			if v != "" {
				items = append(items, t.Columns[i+1].Header+": "+strings.ReplaceAll(v, "\n", "; "))
			}
		}
		o.items(w, "   ", items, " · ")
	}
}

// items writes items after indent, as many a line as fit, joined by sep;
// an item too long for a line starts one and wraps in it.
func (o TextOptions) items(w io.Writer, indent string, items []string, sep string) {
	line := ""
	flush := func() {
		if line != "" {
			o.para(w, indent, indent+"  ", line)
		}
		line = ""
	}
	for _, it := range items {
		if line == "" {
			line = it
			continue
		}
		if o.Width > 0 && textWidth(indent)+textWidth(line)+textWidth(sep)+textWidth(it) > o.Width {
			flush()
			line = it
			continue
		}
		line += sep + it
	}
	flush()
}

// bold marks s on a terminal.
func (o TextOptions) bold(s string) string {
	if !o.Color {
		return s
	}
	return text.Bold.Sprint(s)
}
