package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckAccountLimitsNear is natscli's ACCOUNTS_001 (checkAccountLimits):
// on some server an account's client connections, leafnode connections
// or subscriptions (its account info) are above the connections or
// subscriptions share of its JWT's limit (90 % by default): WARN, or FAIL
// when one is above the limit itself. An account without a decoded JWT
// (a server not in operator mode) or with no limit set is not judged, as
// natscli does not judge it.
//
// natscli v0.5.0 itself decodes each account info of the archive as a bare
// answer, while its gather writes them in the system API's envelope: it
// never sees a JWT and passes every archive. This check reads the answer
// inside the envelope, so it reports what natscli meant to.
var CheckAccountLimitsNear = check.Check{
	Code:        string(report.CodeAccountLimitsNear),
	NatscliCode: "ACCOUNTS_001",
	Severity:    report.Critical,
	Description: "natscli ACCOUNTS_001: an account of the nats audit gather archive is near (warning) or above (critical) its JWT's connection, leafnode connection or subscription limit on a server (natscli v0.5.0 passes it on every archive: it reads no JWT there)",
	Settings: []check.Setting{
		{Key: "connections", Default: 90, Unit: "percent", Description: "alerting threshold as a fraction of configured connections limit"},
		{Key: "subscriptions", Default: 90, Unit: "percent", Description: "alerting threshold as a fraction of configured subscriptions limit"},
	},
	Skip: skipper(needs(judgeAccountLimits, accountzAnswers)),
	Run:  runner(needs(judgeAccountLimits, accountzAnswers)),
}

func judgeAccountLimits(p *check.Pass, g *model.Gather) verdict {
	connPct, subsPct := p.Setting("connections"), p.Setting("subscriptions")
	var found []report.Finding
	exceeded := false
	limit := func(s *model.GatherServer, c capture.Capture, what string, value, max int64, pct float64) {
		account := c.Account.AccountName
		if tag := c.Account.NameTag; tag != "" && tag != account {
			account = tag + " (" + account + ")"
		}
		if max <= 0 {
			return
		}
		share := float64(value) * 100 / float64(max)
		var f report.Finding
		switch {
		case value > max:
			exceeded = true
			f = serverFinding(s, c, "account %s on %s exceeds its %s limit (%.1f%%, %d/%d)", account, s.Name, what, share, value, max)
			f.Severity = report.Critical
		case value > int64(float64(max)*(pct/100)):
			f = serverFinding(s, c, "account %s on %s uses %.1f%% of its %s limit (%d/%d)", account, s.Name, share, what, value, max)
			f.Severity = report.Warning
		default:
			return
		}
		remedy.Prescribe(remedy.AccountLimitsNear, remedy.Args{"account": account, "account_id": c.Account.AccountName, "what": what,
			"value": fmt.Sprint(value), "limit": fmt.Sprint(max)}).Apply(&f)
		found = append(found, f)
	}
	eachAnswer(g, accountzPages, func(_ string, s *model.GatherServer, c capture.Capture) {
		ai := c.Account
		if ai == nil || ai.Claim == nil {
			return
		}
		l := ai.Claim.Nats.Limits
		limit(s, c, "client connections", ai.ClientCnt, l.Conn, connPct)
		limit(s, c, "leaf connections", ai.LeafCnt, l.LeafNodeConn, connPct)
		limit(s, c, "subscriptions", ai.SubCnt, l.Subs, subsPct)
	})
	if exceeded {
		return verdict{outcome: fail, found: found}
	}
	return examples(found, warn)
}
