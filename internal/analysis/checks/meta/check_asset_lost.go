package meta

import (
	"fmt"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

var CheckAssetLost = check.Check{
	Code:        string(report.CodeAssetLost),
	Severity:    report.Critical,
	Description: "a stream or consumer that existed (logs, captures, meta state, a stream group's WAL) is in no store, no API delete is recorded, and the bundle shows what removed it (the orphan cleanup, a join of meta groups founded apart, a rename, a server no member of its group, a meta snapshot dropped where it could have held the asset: dropped at a start its holder logged, in the run in which the asset was still seen, on a release that drops rather than refuses it, and not where another server's intact snapshot of the same index lacks it); the lack of a delete record alone is none: an intact meta state without it is what a compacted API delete leaves",
	Skip:        check.NoStores,
	Requires:    []facts.Fact{facts.FactLostAssets},
	Run: func(p *check.Pass) []report.Finding {
		var out []report.Finding
		for _, a := range p.Facts.LostAssets() {
			out = append(out, lostAssetFinding(p.Model, a))
		}
		return out
	},
}

// lostAssetFinding is the finding of one lost asset, with its remedy.
func lostAssetFinding(m *model.Model, a *facts.LostAsset) report.Finding {
	what := fmt.Sprintf("stream %s > %s", a.Account, a.Stream)
	if a.Consumer != "" {
		what = fmt.Sprintf("consumer %s > %s > %s", a.Account, a.Stream, a.Consumer)
	}
	f := report.Finding{Account: a.Account, Stream: a.Stream, Consumer: a.Consumer, Servers: a.Holders, Since: a.Time, TimelineRefs: a.CauseRefs}
	size := ""
	if a.SizeFrom != "" {
		f.Messages = report.Ptr(a.Messages)
		size = fmt.Sprintf(", last known with %d messages (%s)", a.Messages, a.SizeFrom)
		if a.Bytes > 0 {
			f.Bytes = report.Ptr(a.Bytes)
		}
	}
	last := ""
	if n := len(a.Seen); n > 0 && !a.Seen[n-1].Time.IsZero() {
		last = fmt.Sprintf(", last seen %s (%s)", a.Seen[n-1].Time.UTC().Format(time.RFC3339), a.Seen[n-1].Text)
	}
	f.Message = fmt.Sprintf("%s existed on %s%s%s and is in no store of the bundle, with no API delete recorded; removed by %s", what, strings.Join(a.Holders, ", "), size, last, a.Cause)
	for _, s := range a.Seen {
		f.Evidence = append(f.Evidence, "seen: "+s.Text)
	}
	f.Evidence = append(f.Evidence, a.Assigned...)
	if len(a.Consumers) > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("its consumers went with it: %s", strings.Join(a.Consumers, ", ")))
	}
	if len(a.Assigned) > 0 {
		f.Evidence = append(f.Evidence, "an assignment remains although no store holds the data: the stream's messages are gone, not the assignment")
	}
	r := remedy.Args{"account": a.Account, "stream": a.Stream}
	for _, g := range m.Groups {
		// Offered only where the group's WAL holds messages of the stream:
		// an extract of a WAL holding none writes nothing.
		if g.Kind == natsfmt.GroupStream && g.Account == a.Account && g.Asset == a.Stream && len(g.Views) > 0 && len(g.WALSeqs) > 0 {
			r["group"] = g.Name
			break
		}
	}
	if a.Consumer != "" {
		remedy.Prescribe(remedy.AssetLostConsumer, nil).Apply(&f)
	} else {
		remedy.Prescribe(remedy.AssetLostRecreate, r).Apply(&f)
	}
	return f
}
