package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/analysis"
)

// newChecksCmd lists the registered checks, as natscli's `audit checks` does:
// code, usual severity, what raises it, and its settings with defaults.
func newChecksCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "checks",
		Short: "List the checks analyze runs: codes, severities, what raises each, settings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeChecksJSON(stdout)
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CODE\tSEVERITY\tRAISED WHEN")
			for _, c := range analysis.Checks {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Code, c.Severity, c.Description)
				for _, s := range c.Settings {
					fmt.Fprintf(tw, "\t\t  --set %s.%s=%s (%s): %s\n", c.Code, s.Key, strconv.FormatFloat(s.Default, 'f', -1, 64), s.Unit, s.Description)
				}
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON lines: code, severity, description, settings (key as --set takes it, default, unit, description)")
	return c
}

type checkJSON struct {
	Code        string        `json:"code"`
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

// writeChecksJSON prints one JSON object a line per registered check.
func writeChecksJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, c := range analysis.Checks {
		cj := checkJSON{Code: c.Code, Severity: string(c.Severity), Description: c.Description, Settings: []settingJSON{}}
		for _, s := range c.Settings {
			cj.Settings = append(cj.Settings, settingJSON{Key: c.Code + "." + s.Key, Default: s.Default, Unit: s.Unit, Description: s.Description})
		}
		if err := enc.Encode(cj); err != nil {
			return err
		}
	}
	return nil
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
