package model

import "github.com/jsforensics/jsforensics/capture"

// Gather is one `nats audit gather` archive of the bundle as natscli's
// `audit analyze` reads it (jsm.go v0.5.0 audit/archive Reader): the
// clusters and servers its manifest tags, each server's /varz, /jsz and
// /healthz pages, and the stream infos per replica. natscli's audit checks
// (checks/audit) judge it and nothing else, so that their outcomes are
// natscli's on the same archive.
type Gather struct {
	// Dir is the archive's capture/ folder in the bundle ("capture" when
	// the bundle is the archive, "." when it is that folder).
	Dir string
	// Clusters are the manifest's cluster tags, sorted, each with the
	// servers tagged with it (sorted), whether or not they answered.
	Clusters []GatherCluster
	// Streams are the stream infos, by account, stream, then server.
	Streams []capture.AuditStream
}

// GatherCluster is one cluster of a gather archive.
type GatherCluster struct {
	Name    string
	Servers []GatherServer
}

// GatherServer is one server of a gather archive and its answers, pages in
// entry order; a list is empty when the archive holds no such answer.
// Accountz holds the server's account infos, every account's pages in
// account then entry order.
type GatherServer struct {
	Name                      string
	Varz, Jsz, Healthz        []capture.Capture
	Gatewayz, Leafz, Accountz []capture.Capture
}
