package model

import "github.com/jsforensics/jsforensics/capture"

// Gather is one `nats audit gather` archive of the bundle as natscli's
// `audit analyze` reads it (jsm.go v0.5.0 audit/archive Reader): the
// clusters and servers its manifest tags, each server's /varz, /jsz and
// /healthz pages, and the stream infos per replica. natscli's audit checks
// (checks/audit) judge it and nothing else, so that their outcomes are
// natscli's on the same archive.
//
// A bundle without a gather archive but with loose captures of the same
// endpoints (/varz, /jsz, /healthz, /gatewayz, /leafz, /accountz files)
// has one Gather made of them (Loose): its servers by the cluster their
// answers name, and its stream infos from the /jsz stream details that
// carry their configuration.
type Gather struct {
	// Dir is the archive's capture/ folder in the bundle ("capture" when
	// the bundle is the archive, "." when it is that folder); "" when
	// Loose.
	Dir string
	// Loose: made of the bundle's loose captures, not of an archive.
	Loose bool
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

// Source names g for a reader: the archive's folder, or the loose
// captures.
func (g *Gather) Source() string {
	if g.Loose {
		return "the loose captures"
	}
	return "archive " + g.Dir
}
