package capture

import (
	"os"
	"path/filepath"
	"testing"
)

// The answers of a server that disabled JetStream when its store filled
// (testdata/bundles/diskfull-*, df-2) decode to typed fields: /jsz
// disabled, /healthz error code 10076; the servers that kept running
// answer neither.
func TestJetStreamDisabledAnswers(t *testing.T) {
	for _, b := range []string{"diskfull-v2.12.15", "diskfull-v2.15.3"} {
		for _, tc := range []struct {
			server   string
			disabled bool
		}{{"df-0", false}, {"df-1", false}, {"df-2", true}} {
			dir := filepath.Join("../testdata/bundles", b, "bundle/captures", tc.server)
			jb, err := os.ReadFile(filepath.Join(dir, "jsz.json"))
			if err != nil {
				t.Fatal(err)
			}
			hb, err := os.ReadFile(filepath.Join(dir, "healthz.json"))
			if err != nil {
				t.Fatal(err)
			}
			j, err := DecodeJsz("jsz.json", jb)
			if err != nil {
				t.Fatal(err)
			}
			h, err := DecodeHealthz("healthz.json", hb)
			if err != nil {
				t.Fatal(err)
			}
			if j.Disabled != tc.disabled || h.JetStreamNotEnabled() != tc.disabled {
				t.Errorf("%s %s: jsz disabled %v, healthz %q code %d; want disabled %v", b, tc.server, j.Disabled, h.Error, h.ErrCode, tc.disabled)
			}
			if tc.disabled && (h.Status != "unavailable" || j.Config.MaxStorage != 0 || len(j.AccountDetails) != 0) {
				t.Errorf("%s %s: healthz %q, jsz config %+v, %d accounts", b, tc.server, h.Status, j.Config, len(j.AccountDetails))
			}
		}
	}
}

func TestAPIErrCode(t *testing.T) {
	for _, tc := range []struct {
		text string
		code uint16
	}{
		{"JetStream not enabled (10076)", 10076},
		{"  JetStream not enabled (10076) ", 10076},
		{"JetStream has not established contact with a meta leader", 0},
		{"stream not found (x)", 0},
		{"(10076)", 0},
		{"too big (99999999)", 0},
		{"", 0},
	} {
		if got := apiErrCode(tc.text); got != tc.code {
			t.Errorf("apiErrCode(%q) = %d, want %d", tc.text, got, tc.code)
		}
	}
	h := Healthz{Status: "unavailable", Errors: []HealthzError{{Type: "JETSTREAM", Error: "JetStream not enabled (10076)"}}}
	if h.errCode() != ErrCodeJetStreamNotEnabled {
		t.Errorf("details form: code %d", h.errCode())
	}
}
