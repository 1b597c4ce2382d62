package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/report"
)

func newSchemaCmd(stdout io.Writer) *cobra.Command {
	var rehearsal bool
	c := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the report (analyze --format json), the contract other tools read",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			schema := report.JSONSchema
			if rehearsal {
				schema = report.RehearsalJSONSchema
			}
			b, err := schema()
			if err != nil {
				return err
			}
			_, err = stdout.Write(append(b, '\n'))
			return err
		},
	}
	c.Flags().BoolVar(&rehearsal, "rehearsal", false, "the schema of a rehearsal (rehearse --format json) instead")
	return c
}
