package capture

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// decodeOne decodes data holding exactly one JSON object, a bare answer of
// kind or an envelope around one. The endpoint readers below share it.
func decodeOne(file, kind string, data []byte) (Capture, error) {
	if int64(len(data)) > MaxFileBytes {
		return Capture{}, binfmt.Errorf(file, MaxFileBytes, binfmt.ErrTooLarge, "more than %d bytes", MaxFileBytes)
	}
	lead := int64(len(data) - len(bytes.TrimLeft(data, " \t\r\n")))
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		switch e := err.(type) {
		case *json.SyntaxError:
			return Capture{}, binfmt.Errorf(file, max(e.Offset-1, 0), binfmt.ErrFormat, "%v", e)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return Capture{}, binfmt.Errorf(file, lead, binfmt.ErrTruncated, "JSON value cut off at end of input (%d bytes)", len(data))
		}
		return Capture{}, binfmt.Errorf(file, lead, binfmt.ErrFormat, "%v", err)
	}
	end := dec.InputOffset()
	if rest := bytes.TrimSpace(data[end:]); len(rest) > 0 {
		return Capture{}, binfmt.Errorf(file, end+int64(len(data[end:])-len(bytes.TrimLeft(data[end:], " \t\r\n"))), binfmt.ErrFormat, "data after the JSON value")
	}
	start := end - int64(len(raw))
	if len(raw) == 0 || raw[0] != '{' {
		return Capture{}, binfmt.Errorf(file, start, binfmt.ErrFormat, "not a JSON object")
	}
	c, ok, err := decodeValue(file, kind, raw, start, 1+bytes.Count(data[:start], []byte{'\n'}))
	if (!ok && err == nil) || (ok && c.Kind != kind && c.Error == nil) {
		got := c.Kind
		if got == "" || !ok {
			got = "no known endpoint"
		}
		return c, binfmt.Errorf(file, start, binfmt.ErrFormat, "not a /%s answer (%s)", kind, got)
	}
	return c, err
}

// DecodeJsz decodes one /jsz answer, bare or in a natscli envelope. A
// partly decoded answer is returned with the error.
func DecodeJsz(file string, data []byte) (*Jsz, error) {
	c, err := decodeOne(file, KindJsz, data)
	return c.Jsz, err
}

// DecodeRaftz decodes one /raftz answer (also the ?group= form).
func DecodeRaftz(file string, data []byte) (Raftz, error) {
	c, err := decodeOne(file, KindRaftz, data)
	if c.Raftz == nil {
		return nil, err
	}
	return *c.Raftz, err
}

// DecodeHealthz decodes one /healthz answer.
func DecodeHealthz(file string, data []byte) (*Healthz, error) {
	c, err := decodeOne(file, KindHealthz, data)
	return c.Healthz, err
}

// DecodeVarz decodes one /varz answer.
func DecodeVarz(file string, data []byte) (*Varz, error) {
	c, err := decodeOne(file, KindVarz, data)
	return c.Varz, err
}
