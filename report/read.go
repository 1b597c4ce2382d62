package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// ReadJSON reads a report written by WriteJSON (analyze --format json), so
// it can be rendered again. Unknown fields are ignored, as the contract
// lets later versions add them; a report of another schema is refused.
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("not a jsforensics JSON report: %w", err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("report schema %q, this tool reads %q", r.Schema, Schema)
	}
	return &r, nil
}
