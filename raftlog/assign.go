package raftlog

import (
	"encoding/json"
	"strconv"
	"time"
)

// ClientInfo is the requester recorded in assignments (events.go
// ClientInfo). Snapshots of v2.10.25+/2.12+/2.15 keep only acc, svc and
// cluster.
type ClientInfo struct {
	Start      *time.Time `json:"start,omitempty"`
	Host       string     `json:"host,omitempty"`
	ID         uint64     `json:"id,omitempty"`
	Account    string     `json:"acc,omitempty"`
	Service    string     `json:"svc,omitempty"`
	User       string     `json:"user,omitempty"`
	Name       string     `json:"name,omitempty"`
	Lang       string     `json:"lang,omitempty"`
	Version    string     `json:"ver,omitempty"`
	RTT        int64      `json:"rtt,omitempty"` // ns
	Server     string     `json:"server,omitempty"`
	Cluster    string     `json:"cluster,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	ClientType string     `json:"client_type,omitempty"`
}

// AssetAccount is the account an asset belongs to: Service if set, else
// Account (client.go (*ClientInfo).serviceAccount).
func (c *ClientInfo) AssetAccount() string {
	if c == nil {
		return ""
	}
	if c.Service != "" {
		return c.Service
	}
	return c.Account
}

// StorageType is a group's "store": "file" or "memory". Numbers (File = 22,
// Memory = 33, the internal values) are accepted and named too.
type StorageType string

// UnmarshalJSON accepts the string and the numeric forms.
func (s *StorageType) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*s = StorageType(str)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	switch n {
	case 22:
		*s = "file"
	case 33:
		*s = "memory"
	default:
		*s = StorageType(strconv.FormatInt(n, 10))
	}
	return nil
}

// RaftGroup is the "group" object of an assignment (jetstream_cluster.go
// raftGroup).
type RaftGroup struct {
	Name      string          `json:"name"`
	Peers     []string        `json:"peers"`
	Storage   StorageType     `json:"store"`
	Cluster   string          `json:"cluster,omitempty"`
	Preferred string          `json:"preferred,omitempty"`
	ScaleUp   bool            `json:"scale_up,omitempty"` // v2.12+
	Excluded  []string        `json:"excluded,omitempty"` // v2.15.2
	Desired   json.RawMessage `json:"desired,omitempty"`  // v2.15.2
}

// StreamConfig holds the stream config fields the analysis uses; the whole
// object is kept in StreamAssignment.ConfigJSON.
type StreamConfig struct {
	Name      string     `json:"name"`
	Subjects  []string   `json:"subjects,omitempty"`
	Retention flexString `json:"retention,omitempty"`
	Storage   flexString `json:"storage,omitempty"`
	Replicas  int        `json:"num_replicas"`
}

// ConsumerConfig holds the consumer config fields the analysis uses.
type ConsumerConfig struct {
	Durable   string     `json:"durable_name,omitempty"`
	Name      string     `json:"name,omitempty"`
	AckPolicy flexString `json:"ack_policy,omitempty"`
	Replicas  int        `json:"num_replicas"`
}

// StreamAssignment is a streamAssignment (meta ops 0, 2, 11) or a meta
// snapshot's writeableStreamAssignment (with Consumers, capital C).
type StreamAssignment struct {
	Client     *ClientInfo           `json:"client,omitempty"`
	Created    time.Time             `json:"created"`
	ConfigJSON json.RawMessage       `json:"stream"`
	Group      *RaftGroup            `json:"group"`
	Sync       string                `json:"sync"`
	Subject    string                `json:"subject,omitempty"`
	Reply      string                `json:"reply,omitempty"`
	Restore    json.RawMessage       `json:"restore_state,omitempty"`
	Consumers  []*ConsumerAssignment `json:"Consumers,omitempty"`
	// Config is decoded from ConfigJSON.
	Config StreamConfig `json:"-"`
}

// Account is the asset's account (see ClientInfo.AssetAccount).
func (sa *StreamAssignment) Account() string { return sa.Client.AssetAccount() }

// ConsumerAssignment is a consumerAssignment (meta ops 1, 3, 9) or a meta
// snapshot's consumer element.
type ConsumerAssignment struct {
	Client     *ClientInfo     `json:"client,omitempty"`
	Created    time.Time       `json:"created"`
	Name       string          `json:"name"`
	Stream     string          `json:"stream"`
	ConfigJSON json.RawMessage `json:"consumer"`
	Group      *RaftGroup      `json:"group"`
	Subject    string          `json:"subject,omitempty"`
	Reply      string          `json:"reply,omitempty"`
	State      json.RawMessage `json:"state,omitempty"`
	// Config is decoded from ConfigJSON.
	Config ConsumerConfig `json:"-"`
}

// Account is the asset's account (see ClientInfo.AssetAccount).
func (ca *ConsumerAssignment) Account() string { return ca.Client.AssetAccount() }

func (sa *StreamAssignment) fill() error {
	if len(sa.ConfigJSON) > 0 && string(sa.ConfigJSON) != "null" {
		if err := json.Unmarshal(sa.ConfigJSON, &sa.Config); err != nil {
			return err
		}
	}
	for _, ca := range sa.Consumers {
		if ca == nil {
			continue
		}
		if err := ca.fill(); err != nil {
			return err
		}
	}
	return nil
}

func (ca *ConsumerAssignment) fill() error {
	if len(ca.ConfigJSON) > 0 && string(ca.ConfigJSON) != "null" {
		return json.Unmarshal(ca.ConfigJSON, &ca.Config)
	}
	return nil
}

// flexString takes a JSON string, or any other scalar as its literal text,
// so an enum written as a number by some version still decodes.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	*f = flexString(b)
	return nil
}
