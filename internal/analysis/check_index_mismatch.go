package analysis

import "github.com/jsforensics/jsforensics/report"

var checkIndexMismatch = Check{
	Code:        "index-mismatch",
	Severity:    report.Warning,
	Description: "index.db (or a consumer's state) disagrees with what the blocks hold",
	Skip:        noStores,
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, x := range m.IndexMismatches {
			f := report.Finding{
				Server: m.Name(x.Server), Account: x.Account, Stream: x.Stream, File: x.File,
				Message: x.Detail,
				Remedy:  "index.db claims what the blocks do not hold, and the server trusts a current index.db at start without re-reading the blocks. Removing index.db destroys its record of those messages, and the rebuild that follows cuts every damaged block at its first bad record: first copy it out (cp " + x.File + " " + x.File + ".saved) with the stream folder, then, with the server stopped, remove " + x.File + " so it rebuilds the state from the blocks",
			}
			switch {
			case x.Damaged:
				// The blocks lost what index.db still records: the mismatch
				// is that damage, reported as store-corrupt.
				f.Severity, f.Kind = report.Info, "damage"
				f.Remedy = "index.db still records what the damaged blocks of this copy held (see store-corrupt): keep it, do not remove it; copy it out with the stream folder before the server starts again"
			case x.Outdated:
				f.Severity, f.Kind = report.Info, "outdated"
				f.Remedy = "nothing to do: the server rebuilds index.db from the blocks at start"
			}
			out = append(out, f)
		}
		return out
	},
}
