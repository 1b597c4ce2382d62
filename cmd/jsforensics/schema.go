package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/report"
)

func newSchemaCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the report (analyze --format json), the contract other tools read",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b, err := report.JSONSchema()
			if err != nil {
				return err
			}
			_, err = stdout.Write(append(b, '\n'))
			return err
		},
	}
}
