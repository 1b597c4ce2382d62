package audit

import (
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckTLSExpiring is natscli's SERVER_008 (checkTLSCertificateExpiry):
// a listener's certificate (/varz tls_cert_not_after of the client,
// cluster, gateway, leafnode, MQTT and websocket listeners) expires within
// the critical threshold or has expired (FAIL), or within the warning one
// (WARN), counted from the server's own /varz now. SKIP when no /varz
// carries an expiry.
var CheckTLSExpiring = check.Check{
	Code:        string(report.CodeTLSExpiring),
	NatscliCode: "SERVER_008",
	Severity:    report.Critical,
	Description: "natscli SERVER_008: a TLS certificate of a server of the nats audit gather archive has expired or expires within the thresholds (/varz tls_cert_not_after against /varz now)",
	Settings: []check.Setting{
		{Key: "tls_expire_warning", Default: 30, Unit: "days", Description: "certificate expiry warning threshold in days"},
		{Key: "tls_expire_critical", Default: 7, Unit: "days", Description: "certificate expiry critical threshold in days"},
	},
	Skip: skipper(needs(judgeTLSExpiry, varzAnswers)),
	Run:  runner(needs(judgeTLSExpiry, varzAnswers)),
}

func judgeTLSExpiry(p *check.Pass, g *model.Gather) verdict {
	day := float64(24 * time.Hour)
	warnAt := time.Duration(p.Setting("tls_expire_warning") * day)
	critAt := time.Duration(p.Setting("tls_expire_critical") * day)
	checked, crit := 0, false
	var found []report.Finding
	eachAnswer(g, varzPages, func(cluster string, s *model.GatherServer, c capture.Capture) {
		v := c.Varz
		if v == nil {
			return
		}
		expiry := func(component string, at time.Time) {
			if at.IsZero() {
				return
			}
			checked++
			left := at.Sub(v.Now)
			switch {
			case left <= 0:
				crit = true
				f := serverFinding(s, c, "%s/%s %s TLS certificate expired (expired_at=%v)", cluster, s.Name, component, at)
				f.Severity = report.Critical
				found = append(found, tlsRemedy(f, s, v, component, at))
			case critAt > 0 && left <= critAt:
				crit = true
				f := serverFinding(s, c, "%s/%s %s TLS certificate expires in %v (expires_at=%v)", cluster, s.Name, component, left.Truncate(time.Second), at)
				f.Severity = report.Critical
				found = append(found, tlsRemedy(f, s, v, component, at))
			case warnAt > 0 && left <= warnAt:
				f := serverFinding(s, c, "%s/%s %s TLS certificate expires in %v (expires_at=%v)", cluster, s.Name, component, left.Truncate(time.Second), at)
				f.Severity = report.Warning
				found = append(found, tlsRemedy(f, s, v, component, at))
			}
		}
		expiry("server", v.TLSCertNotAfter)
		expiry("cluster", v.Cluster.TLSCertNotAfter)
		expiry("gateway", v.Gateway.TLSCertNotAfter)
		expiry("leafnode", v.LeafNode.TLSCertNotAfter)
		expiry("mqtt", v.MQTT.TLSCertNotAfter)
		expiry("websocket", v.Websocket.TLSCertNotAfter)
	})
	switch {
	case checked == 0:
		return verdict{outcome: skip, reason: "no /varz carries a TLS certificate expiry"}
	case crit:
		return verdict{outcome: fail, found: found}
	}
	return examples(found, warn)
}

// tlsRemedy is f with its remedy: renew the certificate of component and
// reload the server's configuration.
func tlsRemedy(f report.Finding, s *model.GatherServer, v *capture.Varz, component string, at time.Time) report.Finding {
	remedy.Prescribe(remedy.TLSExpiring, remedy.Args{"server": s.Name, "id": v.ServerID, "component": component,
		"expires": at.UTC().Format(time.RFC3339)}).Apply(&f)
	return f
}
