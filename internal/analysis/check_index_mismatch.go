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
			}
			remedy := prescribe("index-db-stale-remove", args{"file": x.File, "saved": x.File + ".saved"})
			switch {
			case x.Damaged:
				// The blocks lost what index.db still records: the mismatch
				// is that damage, reported as store-corrupt.
				f.Severity, f.Kind = report.Info, "damage"
				remedy = prescribe("index-db-keep", nil)
			case x.Outdated:
				f.Severity, f.Kind = report.Info, "outdated"
				remedy = prescribe("index-db-outdated", nil)
			}
			remedy.apply(&f)
			out = append(out, f)
		}
		return out
	},
}
