package report

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseStreamName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want StreamRef
		err  string // in the error; "" for none
	}{
		{in: "$G/ORDERS", want: StreamRef{"$G", "ORDERS"}},
		{in: "$G > ORDERS", want: StreamRef{"$G", "ORDERS"}},
		{in: "SHOP > LEDGER", want: StreamRef{"SHOP", "LEDGER"}},
		{in: "SHOP>LEDGER", want: StreamRef{"SHOP", "LEDGER"}},
		{in: "  SHOP  >  LEDGER ", want: StreamRef{"SHOP", "LEDGER"}},
		{in: "LEDGER", want: StreamRef{Name: "LEDGER"}},
		{in: "KV_cfg", want: StreamRef{Name: "KV_cfg"}},
		{in: "OBJ_my-bucket", want: StreamRef{Name: "OBJ_my-bucket"}},
		{in: "AAXB3C/ORDERS", want: StreamRef{"AAXB3C", "ORDERS"}},
		{in: "odd/acc/ORDERS", want: StreamRef{"odd/acc", "ORDERS"}}, // a stream name has no /
		{in: "", err: "no stream name"},
		{in: "$G/", err: "no stream name"},
		{in: "/ORDERS", err: "no account before /"},
		{in: "> ORDERS", err: "no account before >"},
		{in: "$G > ", err: "no stream name"},
		{in: "$G > A > B", err: `"A > B" is not a stream name`},
		{in: "ORD ERS", err: "is not a stream name"},
		{in: "orders.new", err: "is not a stream name"},
		{in: "ORDERS*", err: "is not a stream name"},
		{in: "my acc/ORDERS", err: "is not an account name"},
	} {
		got, err := ParseStreamName(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseStreamName(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseStreamName(%q) = %+v, %v; want an error saying %q", tc.in, got, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("ParseStreamName(%q) = %+v, want %+v", tc.in, got, tc.want)
		case tc.err != "" && !strings.Contains(err.Error(), "ACCOUNT/NAME, 'ACCOUNT > NAME' or a NAME"):
			t.Errorf("ParseStreamName(%q): %v does not say the grammar", tc.in, err)
		}
	}
}

func TestResolveStream(t *testing.T) {
	known := []StreamRef{{"$G", "ORDERS"}, {"APP", "LEDGER"}, {"APP", "ORDERS"}, {"SHOP", "LEDGER"}, {"SHOP", "KV_cfg"}}
	var many []StreamRef
	for i := range 25 {
		many = append(many, StreamRef{"$G", fmt.Sprintf("S%02d", i)})
	}
	for _, tc := range []struct {
		in    string
		known []StreamRef
		want  StreamRef
		is    error
		err   string
	}{
		{in: "KV_cfg", known: known, want: StreamRef{"SHOP", "KV_cfg"}},
		{in: "SHOP/LEDGER", known: known, want: StreamRef{"SHOP", "LEDGER"}},
		{in: "APP > ORDERS", known: known, want: StreamRef{"APP", "ORDERS"}},
		{in: "ORDERS", known: known, is: ErrAmbiguousStream, err: "accounts $G, APP each have a stream ORDERS: give ACCOUNT/NAME"},
		{in: "NOPE", known: known, is: ErrNoSuchStream, err: "no stream NOPE in the bundle; its streams: $G > ORDERS, APP > LEDGER, APP > ORDERS, SHOP > LEDGER, SHOP > KV_cfg"},
		{in: "$G/LEDGER", known: known, is: ErrNoSuchStream, err: "no stream $G > LEDGER in the bundle; its streams: $G > ORDERS,"},
		{in: "NOPE", is: ErrNoSuchStream, err: "no stream NOPE in the bundle: it holds none"},
		{in: "NOPE", known: many, is: ErrNoSuchStream, err: "$G > S18, $G > S19 and 5 more"},
	} {
		ref, err := ParseStreamName(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ResolveStream(ref, tc.known)
		switch {
		case tc.is == nil && (err != nil || got != tc.want):
			t.Errorf("ResolveStream(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		case tc.is != nil && (!errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ResolveStream(%q): %v; want %v saying %q", tc.in, err, tc.is, tc.err)
		}
	}
}

// TestKnownStreams: the streams a report describes and those only a raft
// group names, once each, sorted; the meta group names none.
func TestKnownStreams(t *testing.T) {
	r := sampleReport()
	r.Groups = append(r.Groups, Group{Name: "S-R3F-x", Kind: "stream", Account: "APP", Asset: "GONE"},
		Group{Name: "C-R3F-y", Kind: "consumer", Account: "$G", Asset: "ORDERS > C1"})
	got := StreamList(r.KnownStreams())
	if want := "$G > EMPTY, $G > ORDERS, APP > GONE"; got != want {
		t.Errorf("known streams %q, want %q", got, want)
	}
}
